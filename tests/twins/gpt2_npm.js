// The npm side of the GPT-2 tokenizer twin (tests/twins/gpt2_reference.py) and benchmark.
//   node gpt2_npm.js DIR encode RECORDS   GPT-2's own encoder (the gpt-3-encoder package in DIR,
//                                         scripts/fetch_gpt2_bpe.sh) on each record of RECORDS
//                                         (4-byte little-endian length, then the bytes): one JSON
//                                         array of ids per line
//   node gpt2_npm.js DIR time RECORDS REPS   seconds to encode all records, REPS passes (the first
//                                         with an empty cache), wall and CPU seconds (the process's:
//                                         node's compiler and GC threads count), and the number of ids
//   node gpt2_npm.js DIR classes          one letter per code point 0..0x10FFFF: L N S O for
//                                         \p{L} \p{N} \s and the rest, lower case where \p{Cn}
// Each record becomes a string as node reads a file: buf.toString('utf8'), which replaces
// invalid UTF-8 with U+FFFD.
"use strict";
const fs = require("fs");
const path = require("path");
const [dir, what, file, reps] = process.argv.slice(2);

function records(p) {
  const buf = fs.readFileSync(p);
  const out = [];
  for (let at = 0; at < buf.length;) {
    const n = buf.readUInt32LE(at);
    out.push(buf.subarray(at + 4, at + 4 + n).toString("utf8"));
    at += 4 + n;
  }
  return out;
}

if (what === "classes") {
  const parts = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    const s = String.fromCodePoint(c);
    const l = /\p{L}/u.test(s) ? "L" : /\p{N}/u.test(s) ? "N" : /\s/u.test(s) ? "S" : "O";
    parts.push(/\p{Cn}/u.test(s) ? l.toLowerCase() : l);
  }
  process.stdout.write(parts.join("") + "\n");
} else if (what === "encode") {
  const { encode } = require(path.resolve(dir));
  const lines = records(file).map((r) => JSON.stringify(encode(r)));
  process.stdout.write(lines.join("\n") + "\n");
} else if (what === "time") {
  // pass 1 starts with an empty cache (cold); the rest reuse it (warm): seconds of each
  const { encode } = require(path.resolve(dir));
  const texts = records(file);
  const seconds = [];
  let tokens = 0;
  for (let k = 0; k < Math.max(2, Number(reps || 3)); k++) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    tokens = 0;
    for (const t of texts) tokens += encode(t).length;
    const c = process.cpuUsage(c0);
    seconds.push({ wall: Number(process.hrtime.bigint() - t0) / 1e9, cpu: (c.user + c.system) / 1e6 });
  }
  process.stdout.write(JSON.stringify({ seconds, tokens, node: process.version }) + "\n");
} else {
  process.stderr.write("usage: node gpt2_npm.js DIR encode RECORDS | DIR time RECORDS REPS | DIR classes\n");
  process.exit(2);
}
