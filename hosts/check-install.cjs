#!/usr/bin/env node
// Verify hosts/node_modules against hosts/package-lock.json (what `npm ci` would guarantee).
//
// `npm ci` cannot be used here: node-addon-require-builtin@0.1.6 (a dsh dependency) declares
// optional platform packages that were never published (e.g. ...-win32-x64-msvc), so npm
// cannot record them in the lock and `npm ci` always stops with "Missing: ... from lock file".
// scripts/install-hosts.sh therefore runs `npm install --no-save` (reads the lock, never
// rewrites it) on an empty node_modules and then runs this check.
//
// Checks:
//   1. every package in the lock is installed at exactly the locked version, unless it is an
//      optional package that was skipped (other OS/CPU);
//   2. every non-optional peer dependency of an installed package resolves (with
//      --legacy-peer-deps npm installs no peers: the ones dsh needs are listed explicitly in
//      hosts/package.json). Known UI-only peers (react, react-dom) are ignored.
// Exit 0 when fine, 1 with a list of problems otherwise.
'use strict'
const fs = require('fs')
const path = require('path')

const hosts = __dirname
const lock = JSON.parse(fs.readFileSync(path.join(hosts, 'package-lock.json'), 'utf8'))
const IGNORED_PEERS = new Set(['react', 'react-dom'])
const problems = []
let checked = 0

const readPkg = (dir) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  } catch {
    return null
  }
}

for (const [rel, entry] of Object.entries(lock.packages || {})) {
  if (!rel || entry.link) continue
  const dir = path.join(hosts, rel)
  const pkg = readPkg(dir)
  if (!pkg) {
    if (!entry.optional) problems.push(`missing: ${rel}@${entry.version}`)
    continue
  }
  checked++
  if (entry.version && pkg.version !== entry.version) {
    problems.push(`version: ${rel} is ${pkg.version}, lock says ${entry.version}`)
  }
  const meta = pkg.peerDependenciesMeta || {}
  for (const peer of Object.keys(pkg.peerDependencies || {})) {
    if (IGNORED_PEERS.has(peer) || (meta[peer] && meta[peer].optional)) continue
    let cur = dir
    let found = false
    for (;;) {
      if (fs.existsSync(path.join(cur, 'node_modules', peer, 'package.json'))) {
        found = true
        break
      }
      const up = path.dirname(cur)
      if (up === cur || !up.startsWith(hosts)) break
      cur = up
    }
    if (!found) problems.push(`peer: ${pkg.name} needs ${peer}@${pkg.peerDependencies[peer]} (add it to hosts/package.json)`)
  }
}

if (problems.length) {
  const uniq = [...new Set(problems)]
  console.error(`check-install: ${uniq.length} problem(s):\n  ` + uniq.slice(0, 50).join('\n  '))
  process.exit(1)
}
console.error(`check-install: ${checked} packages match package-lock.json`)
