#!/usr/bin/env python3
"""Summarizes a ceph/s3-tests JUnit XML report by access-control area: tests, passes,
failures, errors and skips per area, then the most common failure causes.

    analyze.py REPORT.xml [CAUSES]
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

# An area is the tests whose names match its expression (a test may count in two).
AREAS = [("policy", r"policy"), ("acl", r"acl"),
         ("public_access", r"public_access|public_block|block_public|ignore_public"),
         ("ownership", r"ownership"), ("cors", r"cors"),
         ("object_lock", r"object_lock|retention|legal_hold"), ("post_object", r"post_object")]


def cause(message, text):
    """A failure's cause in one line: the S3 error and operation, else the assertion."""
    both = (message or "") + "\n" + (text or "")
    m = re.search(r"An error occurred \(([^)]+)\) when calling the (\w+) operation", both)
    if m:
        return f"ClientError {m.group(1)} on {m.group(2)}"
    m = re.search(r"^E\s+(assert .{0,80})", text or "", re.M)
    if m:
        return "AssertionError: " + re.sub(r"\b[0-9a-f]{16,}\b", "<id>", m.group(1))
    m = re.search(r"^E\s+(\w+(?:\.\w+)*(?:Error|Exception|Timeout)\b.{0,80})", text or "", re.M)
    if m:
        return m.group(1)
    return (message or "").split("\n")[0][:100]


def load(path):
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        status, why = "passed", None
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed" if child.tag == "failure" else "error"
                why = cause(child.get("message"), child.text)
            elif child.tag == "skipped":
                status, why = "skipped", (child.get("message") or "")[:80]
        # A test that fails and then errors in teardown is reported twice: keep the worst.
        if results.get(case.get("name"), ("passed",))[0] == "passed":
            results[case.get("name")] = (status, why)
    return results


def main():
    results = load(sys.argv[1])
    shown = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    print("%-14s %6s %6s %6s %6s %6s" % ("area", "total", "pass", "fail", "error", "skip"))
    for area, expression in AREAS + [("ALL", ".")]:
        chosen = [v for k, v in results.items() if re.search(expression, k)]
        count = collections.Counter(status for status, _ in chosen)
        print("%-14s %6d %6d %6d %6d %6d" % (area, len(chosen), count["passed"],
                                             count["failed"], count["error"], count["skipped"]))
    causes = collections.defaultdict(list)
    for name, (status, why) in results.items():
        if status in ("failed", "error"):
            causes[why].append(name)
    print(f"\nfailure causes ({len(causes)} distinct):")
    for why, names in sorted(causes.items(), key=lambda x: -len(x[1]))[:shown]:
        print("%4d  %s\n      e.g. %s" % (len(names), why, ", ".join(sorted(names)[:3])))


if __name__ == "__main__":
    main()
