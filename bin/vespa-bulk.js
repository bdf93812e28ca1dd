#!/usr/bin/env node
// In a clone the TypeScript sources run through tsx, so a stale dist/ never shadows them; an installed
// package ships only dist/ and runs that.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
