/* Web Workers for the documentation site opened from files (file://), where browsers refuse `new Worker(url)`:
 * the worker script runs in a hidden same-document iframe instead. Written for this site (search): the worker
 * receives messages as `message` events on its global and answers with the global `postMessage(data)`, which
 * this shim hands back to the page as `message` events of the Worker object. Served over http(s) it does
 * nothing. (Named iframe-worker so that mkdocs-material's offline plugin adds no shim from the network.) */
(function () {
  "use strict";
  if (location.protocol !== "file:") {
    return;
  }

  function IFrameWorker(url) {
    var self = this;
    this.onmessage = null;
    this.listeners = [];
    this.pending = [];
    this.ready = false;
    this.frame = document.createElement("iframe");
    this.frame.hidden = true;
    this.frame.setAttribute("aria-hidden", "true");
    (document.body || document.documentElement).appendChild(this.frame);
    var global = this.frame.contentWindow;
    global.postMessage = function (data) {
      setTimeout(function () { self.emit(data); }, 0);
    };
    var script = global.document.createElement("script");
    script.src = new URL(url, location.href).href;
    script.onload = function () {
      self.ready = true;
      self.pending.forEach(function (data) { self.deliver(data); });
      self.pending = [];
    };
    global.document.head.appendChild(script);
  }

  IFrameWorker.prototype.postMessage = function (data) {
    if (this.ready) {
      this.deliver(data);
    } else {
      this.pending.push(data);
    }
  };

  IFrameWorker.prototype.deliver = function (data) {
    var global = this.frame.contentWindow;
    setTimeout(function () { global.dispatchEvent(new global.MessageEvent("message", { data: data })); }, 0);
  };

  IFrameWorker.prototype.emit = function (data) {
    var event = new MessageEvent("message", { data: data });
    if (typeof this.onmessage === "function") {
      this.onmessage(event);
    }
    this.listeners.slice().forEach(function (listener) { listener(event); });
  };

  IFrameWorker.prototype.addEventListener = function (type, listener) {
    if (type === "message") {
      this.listeners.push(listener);
    }
  };

  IFrameWorker.prototype.removeEventListener = function (type, listener) {
    this.listeners = this.listeners.filter(function (l) { return l !== listener; });
  };

  IFrameWorker.prototype.terminate = function () {
    this.frame.remove();
  };

  window.IFrameWorker = IFrameWorker;
  window.Worker = IFrameWorker;
})();
