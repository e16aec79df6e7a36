#!/usr/bin/env python3
"""The test account's Telegram client for conveyor's Telegram checks (built into `conveyord`,
written beside a run's output, run with the Python of `[telegram] python`, which has kurigram:
Pyrogram's maintained fork, imported as `pyrogram`).

    user_client.py serve --session-dir D --name N --api-id-file F --api-hash-file F
    user_client.py login --session-dir D --name N --api-id-file F --api-hash-file F
    user_client.py version

serve: the first line on stdout says whether the session works ({"ok": true, "result": {"me":
...}} or {"ok": false, "kind": "no_session" | "expired" | "error", "error": ...}); then one JSON
request per stdin line, one JSON answer per stdout line:
    {"op": "chat", "bot": "@b"}                      -> [{id, from_bot, text, buttons}] oldest first
    {"op": "send", "bot": "@b", "text": "..."}       -> {}
    {"op": "press", "bot": "@b", "id": 5, "data": "pay", "timeout": 10}
                                                     -> {"answered": bool}
It never asks anything: a session that is missing or signed out is said on the first line, so
a check at night ends with the login command to run, instead of waiting for a phone number.

login: the one-time sign-in of the test account (Pyrogram asks for the phone number and the
code Telegram sends), run by a person at a terminal through `conveyord telegram-login`.
"""

import argparse
import asyncio
import json
import os
import sys


def out(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_first_line(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            v = f.readline().strip()
    except OSError as e:
        raise SystemExit(f"user_client: {what} {path}: {e.strerror}")
    if not v:
        raise SystemExit(f"user_client: {what} {path} is empty")
    return v


def client(args):
    from pyrogram import Client

    api_id = read_first_line(args.api_id_file, "[telegram] api_id_file")
    if not api_id.isdigit():
        raise SystemExit(f"user_client: [telegram] api_id_file {args.api_id_file}: not a number")
    api_hash = read_first_line(args.api_hash_file, "[telegram] api_hash_file")
    return Client(
        args.name,
        api_id=int(api_id),
        api_hash=api_hash,
        workdir=args.session_dir,
        no_updates=True,
    )


def message(m) -> dict:
    from pyrogram.types import InlineKeyboardMarkup

    rows = []
    if isinstance(m.reply_markup, InlineKeyboardMarkup):
        for row in m.reply_markup.inline_keyboard:
            r = []
            for b in row:
                data = b.callback_data
                if isinstance(data, bytes):
                    data = data.decode("utf-8", "replace")
                r.append({"text": b.text, "data": data})
            rows.append(r)
    return {
        "id": m.id,
        "from_bot": bool(m.from_user and m.from_user.is_bot),
        "text": m.text or m.caption or "",
        "buttons": rows,
    }


async def serve(args) -> None:
    from pyrogram import errors

    session = os.path.join(args.session_dir, f"{args.name}.session")
    if not os.path.isfile(session):
        out({"ok": False, "kind": "no_session", "error": f"no session file {session}"})
        return
    app = client(args)
    signed_out = (
        errors.AuthKeyUnregistered,
        errors.SessionRevoked,
        errors.SessionExpired,
        errors.UserDeactivated,
        errors.Unauthorized,
    )
    try:
        authorized = await asyncio.wait_for(app.connect(), 60)
        if not authorized:
            out({"ok": False, "kind": "expired", "error": "the session is not signed in"})
            return
        me = await asyncio.wait_for(app.get_me(), 60)
    except signed_out as e:
        out({"ok": False, "kind": "expired", "error": str(e)})
        return
    except asyncio.TimeoutError:
        out({"ok": False, "kind": "error", "error": "Telegram did not answer within 60 s"})
        return
    out({"ok": True, "result": {"me": me.username or str(me.id)}})
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            req = json.loads(line)
            try:
                out({"ok": True, "result": await handle(app, req)})
            except Exception as e:  # every failure is answered; the runner decides
                out({"ok": False, "kind": "error", "error": f"{type(e).__name__}: {e}"})
    finally:
        await app.disconnect()


async def handle(app, req):
    op = req.get("op")
    if op == "chat":
        msgs = [message(m) async for m in app.get_chat_history(req["bot"], limit=30)]
        return list(reversed(msgs))
    if op == "send":
        await app.send_message(req["bot"], req["text"])
        return {}
    if op == "press":
        try:
            await app.request_callback_answer(
                req["bot"], req["id"], req["data"], timeout=int(max(1, req.get("timeout", 10)))
            )
            return {"answered": True}
        except (TimeoutError, asyncio.TimeoutError):
            return {"answered": False}
    raise ValueError(f"unknown op {op!r}")


def login(args) -> None:
    if not sys.stdin.isatty():
        raise SystemExit(
            "telegram-login needs a terminal: it asks for the test account's phone number and "
            "the code Telegram sends to it"
        )
    os.makedirs(args.session_dir, mode=0o700, exist_ok=True)
    # An expired session still holds its auth key: Pyrogram would reuse it and fail, so a
    # renewal starts from a fresh file and keeps the old one aside.
    session = os.path.join(args.session_dir, f"{args.name}.session")
    if os.path.exists(session):
        os.replace(session, session + ".old")
        print(f"the previous session is kept as {session}.old", file=sys.stderr)
    print(
        f"Signing in the TEST account (not your own) into {args.session_dir}.\n"
        "Telegram then sends a code to that account and asks for it here.",
        file=sys.stderr,
    )
    # Asked before anything connects: an empty answer ends it with nothing sent to Telegram.
    try:
        phone = input("Phone number of the test account (+…): ").strip()
    except EOFError:
        phone = ""
    if not phone:
        raise SystemExit("no phone number given: nothing was sent to Telegram")
    app = client(args)
    app.phone_number = phone

    async def run():
        async with app:
            me = await app.get_me()
            print(f"signed in as @{me.username or me.id}; the session is in {args.session_dir}", file=sys.stderr)

    asyncio.run(run())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["serve", "login", "version"])
    p.add_argument("--session-dir")
    p.add_argument("--name", default="conveyor_test")
    p.add_argument("--api-id-file")
    p.add_argument("--api-hash-file")
    args = p.parse_args()
    if args.mode == "version":
        import pyrogram

        print(pyrogram.__version__)
        return
    for flag in ("session_dir", "api_id_file", "api_hash_file"):
        if not getattr(args, flag):
            raise SystemExit(f"user_client: --{flag.replace('_', '-')} is required")
    if args.mode == "serve":
        asyncio.run(serve(args))
    else:
        login(args)


if __name__ == "__main__":
    main()
