// Builds dist/: the ES modules (dist/esm, with a package.json that says so) and CommonJS
// (dist/cjs), each with its type declarations, from src/ by the pinned TypeScript.
'use strict'
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] })
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true })
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, project)], { stdio: 'inherit' })
  } catch {
    process.exit(1)
  }
}
fs.writeFileSync(path.join(root, 'dist/esm/package.json'), '{ "type": "module" }\n')
fs.writeFileSync(path.join(root, 'dist/cjs/package.json'), '{ "type": "commonjs" }\n')
