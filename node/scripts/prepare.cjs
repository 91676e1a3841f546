// npm's `prepare` (`npm install ./node` from a clone, `npm pack`): builds dist/ with the pinned
// TypeScript, installing node/'s pinned tools first (`npm ci`, from package-lock.json) when they
// are not there, as in a fresh clone.
'use strict'
const { execFileSync } = require('node:child_process')
const path = require('node:path')

const root = path.join(__dirname, '..')
try {
  require.resolve('typescript/bin/tsc', { paths: [root] })
} catch {
  const npm = process.env.npm_execpath
  const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []]
  execFileSync(command, [...args, 'ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' })
}
require('./build.cjs')
