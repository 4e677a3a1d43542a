"""``ngrameval collect``: init, serve, export, admin, invite, status, plan. The web dependencies are imported
only when a ``collect`` command runs (``pip install 'ngrameval[collect]'``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ngrameval.errors import InputError, MissingDependencyError


def _store(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    try:
        import alembic  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "sqlalchemy", "collect") from None
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    study = load_study(args.study)
    return Store(study, args.database)


def _non_negative(text: str) -> float:
    """A finite number >= 0 (``--min-reliability``)."""
    try:
        x = float(text)
    except ValueError:
        x = -1.0
    if not 0 <= x < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return x


def _password(args: argparse.Namespace) -> str:
    if args.password_file:
        try:
            pw = Path(args.password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise InputError(f"{args.password_file}: {exc.strerror}") from None
    elif sys.stdin.isatty():
        import getpass  # (here, as secrets below: every command's parser imports this module)

        pw = getpass.getpass(f"password for {args.admin}: ")
    else:
        pw = sys.stdin.readline().strip()
    if len(pw) < 8:
        raise InputError("the admin password must have at least 8 characters")
    return pw


def cmd_init(args: argparse.Namespace) -> int:
    store = _store(args)
    store.init(update_manifest=args.update)
    if args.admin:
        from ngrameval.collect.security import end_sessions

        store.add_admin(args.admin, _password(args))
        end_sessions(store, args.admin)
    st = store.study
    n = len(st.items) if st.rating else len(st.stimuli)
    from sqlalchemy.engine import make_url

    where = make_url(store.url).render_as_string(hide_password=True)  # never print a password
    print(f"study {st.name!r} ({st.kind}): {n} {'items' if st.rating else 'stimuli'}; database {where} at head")
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    from ngrameval.collect.security import end_sessions

    store = _store(args)
    store.init()
    store.add_admin(args.admin, _password(args))
    end_sessions(store, args.admin)  # a new password logs out the old sessions
    print(f"admin {args.admin!r} set")
    return 0


def cmd_invite(args: argparse.Namespace) -> int:
    store = _store(args)
    store.init()
    for t in store.add_invites(args.n, args.group):
        print(f"{args.base_url.rstrip('/')}/start?invite={t}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("uvicorn", "collect") from None
    from ngrameval.collect.app import create_app

    store = _store(args)
    store.init()
    app = create_app(store, secure_cookies=args.secure_cookies)
    uvicorn.run(app, host=args.host, port=args.port, workers=1, log_level=args.log_level)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ngrameval.collect.export import export_all

    store = _store(args)
    store.init()
    weight = args.weight == "reliability"
    if args.drop_flagged and store.study.kind != "pairwise":
        raise InputError("--drop-flagged is for side-by-side (pairwise) studies; rating studies: --min-reliability")
    paths = export_all(store, Path(args.out), args.raw_ids, args.datasheet, weight, args.min_reliability,
                       args.drop_flagged)  # fmt: skip
    for path in paths:
        print(path)
    if args.drop_flagged:
        print("judges flagged by the bad-reference test left out of preferences.csv (judges.csv: dropped)")
    if args.min_reliability is not None:
        below = args.min_reliability
        print(f"judges with reliability weight below {below} left out of judgments.csv (judges.csv: dropped)")
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    """A consistent copy of a SQLite study database while ``serve`` runs (SQLite's online backup API, which copies
    committed pages only: a plain file copy can miss what sits in the write-ahead log)."""
    import sqlite3

    from sqlalchemy.engine import make_url

    store = _store(args)
    url = make_url(store.url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        raise InputError(
            f"collect backup copies SQLite study databases; for {url.render_as_string(hide_password=True)} "
            "use the database's own tool (pg_dump for PostgreSQL)"
        )
    if not Path(url.database).is_file():
        raise InputError(f"{url.database}: no such study database (run `ngrameval collect init` first)")
    out = Path(args.out)
    if out.resolve() == Path(url.database).resolve():
        raise InputError(f"{out}: the backup would overwrite the study database itself")
    import secrets

    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    try:
        src = sqlite3.connect(f"file:{url.database}?mode=ro", uri=True)
        dst = sqlite3.connect(tmp)
        try:
            src.backup(dst)
        finally:
            dst.close()
            src.close()
        os.replace(tmp, out)  # the copy appears whole or not at all
    except (OSError, sqlite3.Error) as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{out}: cannot write the backup ({exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    print(f"backed up {url.database} to {out}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Check completion codes pasted from a platform against the study's assignments."""
    from ngrameval.collect.export import verify_codes

    store = _store(args)
    store.init()
    try:
        text = Path(args.codes).read_text(encoding="utf-8-sig") if args.codes != "-" else sys.stdin.read()
    except OSError as exc:
        raise InputError(f"{args.codes}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{args.codes}: not valid UTF-8 ({exc.reason})") from None
    report, bad = verify_codes(store, text, args.codes)
    sys.stdout.write(report)
    return 1 if bad else 0


def cmd_status(args: argparse.Namespace) -> int:
    """The study's counts, its running ranking (rating studies: intervals, clusters, settled pairs) and whether
    it still gives out work, and why not."""
    import json

    from ngrameval.collect.settle import read_settlement
    from ngrameval.collect.stopping import overview

    store = _store(args)
    store.init()
    st = store.study
    counts = store.counts()
    settlement, stop = overview(store)
    checks = _pair_checks(store) if st.kind == "pairwise" else None
    if args.criterion and settlement is not None:
        with store.session() as s:
            settlement = read_settlement(s, st, args.criterion)
    if args.format == "json":
        out = {
            "study": st.name,
            "kind": st.kind,
            "counts": counts,
            "ranking": settlement.as_dict() if settlement else None,
            "stopping": stop.as_dict() if stop else None,
            **({"judges": checks} if checks is not None else {}),
        }
        print(json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False))
        return 0
    answered = f"{counts['trials_answered']} of {counts['trials']} trials answered" if st.rating else (
        f"{counts['descriptions']} descriptions, {counts['skips']} skips"
    )  # fmt: skip
    print(f"study {st.name!r} ({st.kind}): {counts['annotators']} annotators; {answered}")
    if settlement is not None:
        sys.stdout.write(settlement.table())
    if stop is not None:
        print(f"stopped: {stop.detail}" if stop.stopped else f"running{': ' + stop.detail if stop.detail else ''}")
    if checks is not None and st.bad_references:
        flagged = [j["judge"] for j in checks["per_judge"] if j["flagged"]]
        print(f"judges: {checks['checked']} checked, {checks['flagged']} flagged by the bad-reference test"
              f"{': ' + ', '.join(flagged) if flagged else ''}")  # fmt: skip
    return 0


def _pair_checks(store: Any) -> dict[str, Any]:
    """A side-by-side study's judge checks for ``collect status``: the datasheet's summary and each judge's."""
    import dataclasses

    from ngrameval.collect.datasheet import pair_summary
    from ngrameval.collect.export import pair_judges

    judges = pair_judges(store)
    per = [{"judge": j.judge, "group": j.group, **dataclasses.asdict(j.check)} for j in judges]
    return {**pair_summary(judges, store.study.alpha), "per_judge": per}


def cmd_plan(args: argparse.Namespace) -> int:
    """Simulate designs from a pilot and print the plan; ``--write`` puts it into STUDY.toml."""
    import tomllib

    from ngrameval.io.judgments import read_judgments
    from ngrameval.meta.plan import plan_study

    try:  # the study file must be readable before minutes of simulation
        tomllib.loads(Path(args.study).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{args.study}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{args.study}: not a valid TOML file ({exc})") from None
    own = args.layout == "summeval"  # SummEval's JSONL names its documents and experts itself
    pilot = read_judgments(
        args.pilot,
        layout=args.layout,
        system=args.system_column,
        scores=[args.score_column] if args.score_column else None,
        segment=None if own else args.segment_column,
        judge=None if own else args.judge_column,
        criterion=args.criterion_column,
    )
    plan = plan_study(
        pilot, delta=args.delta, power=args.power, alpha=args.alpha, criterion=args.criterion,
        max_items=args.max_items, test=args.test, n_sim=args.simulations, seed=args.seed,
    )  # fmt: skip
    sys.stdout.write(plan.table())
    if args.write:
        from ngrameval.collect.study import write_target

        if plan.chosen is None:
            raise InputError(f"{args.study}: no design reaches power {args.power:g}; nothing written")
        c = plan.chosen
        write_target(args.study, c.judges, plan.summary().split(": ", 1)[1])
        print(f"wrote target = {c.judges} and the plan into {args.study}")
    return 0


def add_collect_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``collect`` and its subcommands on the main parser's subparsers."""
    c = sub.add_parser("collect", help="run a description, paraphrase or rating study in the browser")
    csub = c.add_subparsers(dest="collect_command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("study", help="the study definition (STUDY.toml)")
        q.add_argument("--database", help="SQLAlchemy URL overriding the study's (e.g. postgresql+psycopg://...)")

    q = csub.add_parser("init", help="create or upgrade the study database and load the stimuli")
    common(q)
    q.add_argument("--admin", help="also create (or reset) this admin; password from --password-file or stdin")
    q.add_argument("--password-file", help="read the admin password from this file")
    q.add_argument(
        "--update",
        action="store_true",
        help="apply an edited manifest (only to stimuli nobody has been shown yet)",
    )
    q.set_defaults(func=cmd_init)
    q = csub.add_parser("admin", help="create an admin or reset their password")
    common(q)
    q.add_argument("admin", help="user name")
    q.add_argument("--password-file", help="read the password from this file (else stdin)")
    q.set_defaults(func=cmd_admin)
    q = csub.add_parser("invite", help="print invitation links")
    common(q)
    q.add_argument("-n", type=int, default=1, help="how many (default 1)")
    q.add_argument("--group", default="", help="judge group of the invited (e.g. expert)")
    q.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server's address as annotators see it")
    q.set_defaults(func=cmd_invite)
    q = csub.add_parser("serve", help="serve the study (uvicorn)")
    common(q)
    q.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    q.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    q.add_argument("--log-level", default="info", help="uvicorn log level (default info)")
    q.add_argument(
        "--secure-cookies",
        action="store_true",
        help="send the session cookie over HTTPS only (Secure; SameSite=None and Partitioned, so that it also "
        "works in MTurk's iframe): use it behind an HTTPS proxy",
    )
    q.set_defaults(func=cmd_serve)
    q = csub.add_parser("export", help="write descriptions (MSVD CSV) or judgments, outputs and the ledger")
    common(q)
    q.add_argument("--out", required=True, help="output directory")
    q.add_argument("--raw-ids", action="store_true", help="the platforms' worker ids instead of pseudonyms")
    q.add_argument(
        "--datasheet", action="store_true", help="also datasheet.json: design, judges, controls, payment, dates (HEDS)"
    )
    q.add_argument(
        "--weight",
        choices=["reliability"],
        help="add a column weight to judgments.csv: the judge's 1/noise^2 on that criterion, normalised to mean 1",
    )
    q.add_argument(
        "--min-reliability",
        type=_non_negative,
        metavar="X",
        help="leave out of judgments.csv the judges whose mean reliability weight is below X (1 = an average judge)",
    )
    q.add_argument(
        "--drop-flagged",
        action="store_true",
        help="side-by-side studies: leave out of preferences.csv the judges whose bad-reference test failed "
        "(p >= [rating] alpha)",
    )
    q.set_defaults(func=cmd_export)
    q = csub.add_parser(
        "status",
        help="counts, the running ranking with always-valid intervals and settled pairs, and whether work is given out",
    )
    common(q)
    q.add_argument("--criterion", help="rank this criterion (default: [stopping] criterion, else the first)")
    q.add_argument("-f", "--format", choices=("text", "json"), default="text", help="output format (default text)")
    q.set_defaults(func=cmd_status)
    q = csub.add_parser("backup", help="copy a SQLite study database safely while it is served")
    common(q)
    q.add_argument("out", help="the copy to write (a new SQLite file)")
    q.set_defaults(func=cmd_backup)
    q = csub.add_parser(
        "verify",
        help="check completion codes from MTurk or Prolific against the study (exit 1 if any is not valid)",
    )
    common(q)
    q.add_argument(
        "codes",
        help="a file of codes, one a line, or MTurk's batch results CSV (AssignmentId, WorkerId, Answer.code); "
        "- reads stdin",
    )
    q.set_defaults(func=cmd_verify)
    q = csub.add_parser(
        "plan",
        help="simulate designs from pilot judgments: items x judges that separate systems delta apart",
    )
    q.add_argument("study", help="the study definition (STUDY.toml; --write sets its [study] target)")
    q.add_argument("--pilot", required=True, help="pilot judgments (CSV/TSV/JSONL, as `collect export` writes)")
    q.add_argument("--delta", type=float, required=True, help="the smallest true score difference to separate")
    q.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    q.add_argument("--alpha", type=float, default=0.05, help="significance level, Holm over all pairs (default 0.05)")
    q.add_argument("--max-items", type=int, help="try no design with more items than this")
    q.add_argument("--test", choices=("ar", "bootstrap"), default="ar", help="the analysis' test (default ar)")
    q.add_argument("--simulations", type=int, default=400, help="simulated studies per design (default 400)")
    q.add_argument("--seed", type=int, help="random seed (default: a fresh one, printed)")
    q.add_argument("--criterion", help="the criterion to plan for, when the pilot has several")
    q.add_argument("--layout", default="auto", help="pilot layout: auto, long, wide, summeval ... (default auto)")
    q.add_argument("--system-column", default="system", help="pilot column naming the system (default system)")
    q.add_argument("--segment-column", default="segment", help="pilot column naming the item (default segment)")
    q.add_argument("--judge-column", default="judge", help="pilot column naming the judge (default judge)")
    q.add_argument("--score-column", help="pilot score column (default score)")
    q.add_argument("--criterion-column", help="pilot column naming the criterion (long layout, e.g. criterion)")
    q.add_argument("--write", action="store_true", help="write target (judges per item) and the plan into STUDY.toml")
    q.set_defaults(func=cmd_plan)
