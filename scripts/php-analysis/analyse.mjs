// make lint's static analysis of the PHP: Intelephense (npm, pinned by scripts/php-analysis/
// package-lock.json), a PHP language server that checks types (arguments, returns, properties
// against declared and phpdoc types), undefined classes, methods, functions, constants and
// properties, argument counts, implementations of interfaces and abstract methods, and unused
// symbols. It runs here as an editor would run it: this script speaks its protocol (LSP) over
// stdio, indexes the repository with Debian's PHP libraries (/usr/share/php: Symfony,
// Laravel, Predis, PHPUnit) and the extensions' stubs (phpredis among them), opens every .php
// file of the folders, and prints each diagnostic. Any diagnostic fails the run.
//
//   node scripts/php-analysis/analyse.mjs FOLDER...
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const folders = process.argv.slice(2).map((folder) => resolve(folder))
if (folders.length === 0) {
  console.error('usage: analyse.mjs FOLDER...')
  process.exit(2)
}
const skipped = new Set(['vendor', 'node_modules', 'cache'])
const files = []
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (skipped.has(name)) continue
    if (statSync(path).isDirectory()) walk(path)
    else if (path.endsWith('.php')) files.push(path)
  }
}
folders.forEach(walk)

const here = fileURLToPath(new URL('.', import.meta.url))
const root = resolve(here, '../..')
// Intelephense's default stubs, less the extensions this code has no business with, and phpredis's.
const stubs = ['apache', 'bcmath', 'calendar', 'Core', 'ctype', 'curl', 'date', 'dom', 'exif', 'fileinfo', 'filter',
  'hash', 'iconv', 'intl', 'json', 'libxml', 'mbstring', 'openssl', 'pcntl', 'pcre', 'PDO', 'Phar', 'posix', 'random',
  'readline', 'redis', 'Reflection', 'session', 'SimpleXML', 'sockets', 'sodium', 'SPL', 'standard', 'superglobals',
  'tokenizer', 'xml', 'xmlreader', 'xmlwriter', 'Zend OPcache', 'zip', 'zlib']
const settings = {
  intelephense: {
    stubs,
    environment: {
      phpVersion: '8.2.0',
      includePaths: ['/usr/share/php', join(root, '.servers/php/src/symfony/src/Symfony/Component/Lock/Tests')],
    },
    files: {
      maxSize: 5000000,
      exclude: ['**/.git/**', '**/.servers/**', '**/target/**', '**/vendor/**', '**/node_modules/**', '**/bootstrap/cache/**'],
    },
    diagnostics: { enable: true, run: 'onType' },
  },
}

const server = spawn(process.execPath, [join(here, 'node_modules/intelephense/lib/intelephense.js'), '--stdio'], {
  stdio: ['pipe', 'pipe', 'inherit'],
})
let buffer = Buffer.alloc(0)
let lastId = 0
const pending = new Map()
const diagnostics = new Map()
let indexed
const indexing = new Promise((done) => { indexed = done })
const send = (message) => {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }))
  server.stdin.write(`Content-Length: ${body.length}\r\n\r\n`)
  server.stdin.write(body)
}
const request = (method, params) => new Promise((done) => {
  const id = ++lastId
  pending.set(id, done)
  send({ id, method, params })
})
const setting = (section) => (section ? section.split('.').reduce((value, key) => value?.[key], settings) ?? null : settings)
const receive = (message) => {
  if (message.id !== undefined && message.method === undefined) {
    pending.get(message.id)?.(message.result)
    pending.delete(message.id)
  } else if (message.method === 'workspace/configuration') {
    send({ id: message.id, result: message.params.items.map((item) => setting(item.section)) })
  } else if (message.id !== undefined) {
    send({ id: message.id, result: null })
  } else if (message.method === 'textDocument/publishDiagnostics') {
    diagnostics.set(message.params.uri, message.params.diagnostics)
  } else if (message.method === 'indexingEnded') {
    indexed()
  }
}
server.stdout.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk])
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n')
    if (end < 0) return
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())[1])
    if (buffer.length < end + 4 + length) return
    receive(JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString()))
    buffer = buffer.subarray(end + 4 + length)
  }
})

// The repository is the workspace (what the folders' code refers to is indexed with them).
const workspace = pathToFileURL(root).href
await request('initialize', {
  processId: process.pid,
  rootUri: workspace,
  workspaceFolders: [{ uri: workspace, name: 'goblin' }],
  capabilities: { workspace: { configuration: true, workspaceFolders: true } },
  initializationOptions: { storagePath: join(root, '.servers/php/intelephense'), clearCache: false },
})
send({ method: 'initialized', params: {} })
send({ method: 'workspace/didChangeConfiguration', params: { settings } })
await indexing
for (const file of files) {
  const textDocument = { uri: pathToFileURL(file).href, languageId: 'php', version: 1, text: readFileSync(file, 'utf8') }
  send({ method: 'textDocument/didOpen', params: { textDocument } })
}
const deadline = Date.now() + 5 * 60 * 1000
const missing = () => files.filter((file) => !diagnostics.has(pathToFileURL(file).href))
while (missing().length > 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100))
let problems = 0
for (const file of missing()) {
  problems++
  console.log(`${file}: not analysed`)
}
for (const file of files) {
  for (const diagnostic of diagnostics.get(pathToFileURL(file).href) ?? []) {
    problems++
    console.log(`${file}:${diagnostic.range.start.line + 1}: ${diagnostic.message}`)
  }
}
console.log(`php-analysis: ${problems} problems in ${files.length} files`)
server.kill()
process.exit(problems === 0 ? 0 : 1)
