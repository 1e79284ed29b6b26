#!/usr/bin/env python3
"""Makes explode-schedule-v1.json: test vectors for docs/protocol/explode-schedule.md, computed
from that page's rules by this second implementation (Python standard library only),
independently of Sotto's Swift code.

usage: make_explode_schedule_vectors.py > explode-schedule-v1.json
Deterministic: two runs give the same file.
"""
import json, re, sys
from datetime import datetime, timezone

MAX_SEQUENCE = 2**53 - 1
ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.(\d{1,9}))?Z$")


def millis(text):
    """§2: ISO 8601 UTC, 'Z', zero to nine fraction digits (milliseconds kept, the rest cut)."""
    m = ISO.match(text) if isinstance(text, str) else None
    if not m:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    try:
        t = datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc)
    except ValueError:
        return None
    frac = (m.group(8) or "") + "000"
    return int(t.timestamp()) * 1000 + int(frac[:3])


def decode(content):
    """§2: the decision a content carries, or 'malformed_message'."""
    try:
        value = json.loads(content)
    except ValueError:
        return "malformed_message"
    if not isinstance(value, dict):
        return "malformed_message"
    sequence = 0
    if "sequence" in value:
        n = value["sequence"]
        # An integer literal (no fraction, no exponent), 1 ... 2^53-1.
        if type(n) is not int or not (1 <= n <= MAX_SEQUENCE):
            return "malformed_message"
        sequence = n
    cancel = False
    if "cancel" in value:
        if type(value["cancel"]) is not bool:
            return "malformed_message"
        cancel = value["cancel"]
    if cancel:
        if "expiresAt" in value or sequence == 0:
            return "malformed_message"
        return {"sequence": sequence, "cancel": True}
    at = millis(value.get("expiresAt"))
    if at is None:
        return "malformed_message"
    return {"sequence": sequence, "expiresAtMs": at}


def wins(a, b):
    """§3: a replaces b: higher sequence; same sequence: earlier time; a cancel only alone."""
    if a["sequence"] != b["sequence"]:
        return a["sequence"] > b["sequence"]
    if "expiresAtMs" in a and "expiresAtMs" in b:
        return a["expiresAtMs"] < b["expiresAtMs"]
    return "expiresAtMs" in a and "expiresAtMs" not in b


def in_force(decisions):
    best = None
    for d in decisions:
        if best is None or wins(d, best):
            best = d
    return best


def accepts(expires_at_in_force, sent_at, now):
    """§4: 'ok' or the refusal, for a creator's decision arriving at `now`."""
    if expires_at_in_force is not None and (expires_at_in_force <= now or sent_at >= expires_at_in_force):
        return "conversation_expired"
    return "ok"


DECODE = [
    ("version 1", '{"expiresAt":"2026-05-01T18:00:00Z"}'),
    ("numbered time", '{"expiresAt":"2026-05-01T18:00:00.250Z","sequence":2}'),
    ("cancel", '{"cancel":true,"sequence":3}'),
    ("cancel false is a time", '{"expiresAt":"2026-05-01T18:00:00Z","cancel":false,"sequence":1}'),
    ("unknown keys ignored", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":7,"note":{"x":[1,2]}}'),
    ("largest sequence", '{"cancel":true,"sequence":9007199254740991}'),
    ("nine fraction digits", '{"expiresAt":"2026-05-01T18:00:00.123456789Z","sequence":1}'),
    ("cancel without sequence", '{"cancel":true}'),
    ("cancel with a time", '{"cancel":true,"expiresAt":"2026-05-01T18:00:00Z","sequence":4}'),
    ("cancel with null time", '{"cancel":true,"expiresAt":null,"sequence":4}'),
    ("cancel not a boolean", '{"cancel":"true","sequence":4}'),
    ("sequence zero", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":0}'),
    ("sequence negative", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":-1}'),
    ("sequence fraction", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":1.5}'),
    ("sequence written with exponent", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":1e3}'),
    ("sequence a string", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":"2"}'),
    ("sequence past 2^53-1", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":9007199254740992}'),
    ("sequence past Int64", '{"expiresAt":"2026-05-01T18:00:00Z","sequence":99999999999999999999999}'),
    ("no time, no cancel", '{"sequence":5}'),
    ("time not UTC", '{"expiresAt":"2026-05-01T18:00:00+02:00","sequence":5}'),
    ("time not a date", '{"expiresAt":"2026-02-30T18:00:00Z","sequence":5}'),
    ("time a number", '{"expiresAt":1777658400000,"sequence":5}'),
    ("not an object", '[{"expiresAt":"2026-05-01T18:00:00Z"}]'),
    ("not JSON", '{"expiresAt":"2026-05-01T18:00:00Z",'),
    ("empty", ''),
]

T = "2026-05-01T18:00:00Z"
IN_FORCE = [
    ("version 1: earliest wins", ['{"expiresAt":"2026-05-01T18:00:00Z"}', '{"expiresAt":"2026-05-01T17:00:00Z"}',
                                  '{"expiresAt":"2026-05-01T19:00:00Z"}']),
    ("postpone", ['{"expiresAt":"2026-05-01T18:00:00Z","sequence":1}', '{"expiresAt":"2026-05-02T18:00:00Z","sequence":2}']),
    ("postpone arriving first", ['{"expiresAt":"2026-05-02T18:00:00Z","sequence":2}', '{"expiresAt":"2026-05-01T18:00:00Z","sequence":1}']),
    ("bring forward", ['{"expiresAt":"2026-05-01T18:00:00Z","sequence":1}', '{"expiresAt":"2026-05-01T12:00:00Z","sequence":2}']),
    ("cancel", ['{"expiresAt":"2026-05-01T18:00:00Z","sequence":1}', '{"cancel":true,"sequence":2}']),
    ("cancel, then a new time", ['{"cancel":true,"sequence":2}', '{"expiresAt":"2026-05-03T18:00:00Z","sequence":3}',
                                 '{"expiresAt":"2026-05-01T18:00:00Z","sequence":1}']),
    ("numbered beats version 1, later or not", ['{"expiresAt":"2026-05-01T10:00:00Z"}',
                                                '{"expiresAt":"2026-05-09T18:00:00Z","sequence":1}']),
    ("same sequence: earlier time", ['{"expiresAt":"2026-05-01T18:00:00Z","sequence":4}',
                                     '{"expiresAt":"2026-05-01T17:59:59.999Z","sequence":4}']),
    ("same sequence: a time beats a cancel", ['{"cancel":true,"sequence":4}', '{"expiresAt":"2026-05-05T18:00:00Z","sequence":4}']),
    ("duplicate", ['{"cancel":true,"sequence":2}', '{"cancel":true,"sequence":2}', '{"expiresAt":"2026-05-01T18:00:00Z","sequence":1}']),
]

E = millis(T)
RACE = [
    ("made and here before the time", E, E - 1, E - 1000),
    ("made before the time, here after it", E, E - 1, E),
    ("made at the time, here before it (creator's clock ahead)", E, E, E - 60_000),
    ("made after the time, here before it", E, E + 5_000, E - 60_000),
    ("nothing scheduled", None, E + 5_000, E + 10_000),
]


def main():
    out = {
        "spec": "docs/protocol/explode-schedule.md",
        "made_with": "make_explode_schedule_vectors.py (Python standard library)",
        "decode": [{"name": n, "content": c, "expect": {"error": r} if isinstance(r, str) else r}
                   for n, c in DECODE for r in [decode(c)]],
        "inForce": [],
        "race": [{"name": n, "expiresAtInForceMs": e, "sentAtMs": s, "nowMs": now, "expect": accepts(e, s, now)}
                 for n, e, s, now in RACE],
    }
    for name, contents in IN_FORCE:
        decisions = [decode(c) for c in contents]
        assert all(isinstance(d, dict) for d in decisions), name
        best = in_force(decisions)
        out["inForce"].append({"name": name, "decisions": contents,
                               "expect": {"sequence": best["sequence"], "expiresAtMs": best.get("expiresAtMs")}})
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
