#!/usr/bin/env python3
"""Bytes of a Cairn index file by section and, inside the corpus and graph sections, by list.

    python3 tools/index_breakdown.py <index.cairn or index.cairn.gz>

For each section and list: its raw bytes and the bytes of `gzip -9` of that list alone (a list's
share of the whole file's gzip is close to it; the sum over lists is an upper bound, as gzip also
finds matches across lists). Reads format version 3 (streams, docs/method/index-size.md) and
versions 1-2 (fixed-width lists), to compare a file before and after the change of format.
"""
import gzip
import struct
import sys
import zlib

path = sys.argv[1]
raw = open(path, 'rb').read()
if raw[:2] == b'\x1f\x8b':
    raw = gzip.decompress(raw)
version, n = struct.unpack_from('<II', raw, 8)
NAMES = {1: 'config', 2: 'corpus', 3: 'dense', 4: 'graph', 5: 'graph-report', 6: 'cage-z'}


def gz(b):
    return len(zlib.compress(bytes(b), 9))


secs = {}
print(f"file: format version {version}, {len(raw)} bytes raw, {len(gzip.compress(raw, 9))} gzip -9")
for i in range(n):
    kind, off, ln, _crc = struct.unpack_from('<IQQI', raw, 16 + 24 * i)
    secs[kind] = raw[off:off + ln]
    print("section %-14s %10d raw %10d gz" % (NAMES[kind], ln, gz(secs[kind])))

cols = {}


def put(name, b):
    cols.setdefault(name, bytearray()).extend(b)


def varint(b, pos):
    v, shift = 0, 0
    while True:
        x = b[pos]
        pos += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, pos


def streams(b, pos, names):
    for name in names:
        if name is None:  # one byte between streams
            put('graph: synonym storage byte', b[pos:pos + 1])
            pos += 1
            continue
        ln, pos = varint(b, pos)
        put(name, b[pos:pos + ln])
        pos += ln
    return pos


if version >= 3:
    c = secs[2]
    _, pos = varint(c, 0)
    assert streams(c, pos, ['corpus: lengths', 'corpus: ids', 'corpus: titles', 'corpus: texts']) == len(c)
    g = secs.get(4)
    if g:
        jl = struct.unpack_from('<I', g, 1)[0]
        pos = 5 + jl
        for _ in range(4):
            _, pos = varint(g, pos)
        put('graph: slot, config, counts', g[:pos])
        end = streams(g, pos, [
            'graph: node kinds', 'graph: passage corpus indices', 'graph: entity names',
            'graph: entity key exceptions', 'graph: relation table', 'graph: fact entities',
            'graph: fact relations', 'graph: fact passages', 'graph: fact text exceptions', None,
            'graph: synonym counts', 'graph: synonym pairs'])
        assert end == len(g)
else:
    c = secs[2]
    pos = 4
    for _ in range(struct.unpack_from('<I', c, 0)[0]):
        for f in ('id', 'title', 'text'):
            ln = struct.unpack_from('<I', c, pos)[0]
            put('corpus: lengths', c[pos:pos + 4])
            put('corpus: %ss' % f, c[pos + 4:pos + 4 + ln])
            pos += 4 + ln
    g = secs.get(4)
    if g:
        pos = 0

        def u32():
            global pos
            v = struct.unpack_from('<I', g, pos)[0]
            pos += 4
            return v

        def s(name):
            global pos
            a = pos
            ln = u32()
            put(name + ' (lengths)', g[a:a + 4])
            put(name, g[pos:pos + ln])
            pos += ln

        def lst(name):
            global pos
            a = pos
            k = u32()
            put(name + ' (counts)', g[a:a + 4])
            put(name, g[pos:pos + 4 * k])
            pos += 4 * k

        put('graph: slot, config', g[:21])
        pos = 21
        nn = u32()
        put('graph: node table', g[pos:pos + 5 * nn])
        pos += 5 * nn
        for _ in range(u32()):
            put('graph: entity node ids', g[pos:pos + 4])
            pos += 4
            s('graph: entity names')
            s('graph: entity keys')
            lst('graph: entity passages')
            lst('graph: entity facts')
            k = u32()
            put('graph: synonym counts', g[pos - 4:pos])
            for _ in range(k):
                put('graph: synonym ordinals', g[pos:pos + 4])
                put('graph: synonym cosines', g[pos + 4:pos + 8])
                pos += 8
        pos += 4
        for _ in range(u32()):
            put('graph: passage node ids', g[pos:pos + 4])
            pos += 4
            lst('graph: passage corpus indices')
            lst('graph: passage entities')
            lst('graph: passage facts')
        for _ in range(u32()):
            put('graph: fact subjects', g[pos:pos + 4])
            put('graph: fact objects', g[pos + 4:pos + 8])
            pos += 8
            s('graph: fact relations')
            s('graph: fact texts')
            lst('graph: fact passages')
        assert pos == len(g)

total = 0
for name, b in sorted(cols.items(), key=lambda kv: -gz(kv[1])):
    z = gz(b)
    total += z
    print("  %-36s %10d raw %10d gz" % (name, len(b), z))
print("  sum of the lists' gzip sizes: %d" % total)
