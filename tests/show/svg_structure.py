#!/usr/bin/env python3
"""Reads a `topolaunch show` SVG (or the SVG inside its HTML page) with a real
XML parser and prints what it holds as JSON, for the tests to compare with the
topology: switches, hosts drawn one by one, boxes and the hosts they count,
cable wires and the cables they stand for, ids, and what the root declares.

    svg_structure.py FILE
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".html"):
        # The page's SVG element is itself well-formed XML.
        text = re.search(r"<svg .*?</svg>", text, re.S).group(0)
    root = ET.fromstring(text)
    assert root.tag == NS + "svg", root.tag
    groups = {}
    ids = []
    hosts_in = {}
    for g in root.iter(NS + "g"):
        cls = g.get("class", "")
        groups.setdefault(cls, []).append(g)
        if g.get("id"):
            ids.append(g.get("id"))
    def count(cls):
        return len(groups.get(cls, []))
    def total(cls, attr):
        return sum(int(g.get(attr)) for g in groups.get(cls, []))
    out = {
        "switches": count("switch"),
        "switch_names": sorted(g.get("data-name") for g in groups.get("switch", [])),
        "hosts": count("host"),
        "host_names": sorted(g.get("data-name") for g in groups.get("host", [])),
        "leafboxes": count("leafbox"),
        "boxed_hosts": total("leafbox", "data-hosts") + total("offfabric", "data-hosts"),
        "unmapped_groups": count("unmapped"),
        "wires": count("wire"),
        "cables": total("wire", "data-cables"),
        "ids_unique": len(ids) == len(set(ids)),
        "severities": sorted(g.get("data-severity") for gs in groups.values() for g in gs if g.get("data-severity")),
        "ring_stops": int(groups["ring"][0].get("data-stops")) if "ring" in groups else 0,
        "declared": {k[5:]: root.get(k) for k in root.keys() if k.startswith("data-")},
        "titles": sum(1 for _ in root.iter(NS + "title")),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
