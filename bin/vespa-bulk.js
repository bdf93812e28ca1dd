#!/usr/bin/env node
// In a clone the TypeScript sources run through tsx (a devDependency), so a stale dist/ never shadows them. An
// installed package ships only dist/ (package.json `files`) and runs that; the node_modules test keeps an
// installed copy on dist/ even if sources ever came along, since tsx is not installed there.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (existsSync(source) && !/[\\/]node_modules[\\/]/.test(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
