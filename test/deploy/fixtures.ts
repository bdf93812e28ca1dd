import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { strToU8, zipSync, type Zippable } from 'fflate';

export const sampleAppDir = fileURLToPath(new URL('../../samples/app', import.meta.url));

/** The sample application's files, by package path. */
export function sampleFiles(): Record<string, string> {
  return {
    'services.xml': readFileSync(join(sampleAppDir, 'services.xml'), 'utf8'),
    'schemas/music.sd': readFileSync(join(sampleAppDir, 'schemas/music.sd'), 'utf8'),
    'schemas/product.sd': readFileSync(join(sampleAppDir, 'schemas/product.sd'), 'utf8'),
    'schemas/user.sd': readFileSync(join(sampleAppDir, 'schemas/user.sd'), 'utf8'),
  };
}

export function zipFiles(files: Record<string, string>): Uint8Array {
  const zippable: Zippable = {};
  for (const [path, text] of Object.entries(files)) zippable[path] = strToU8(text);
  return zipSync(zippable);
}

const trees: string[] = [];

/** Writes files into a new temporary directory; cleanupTrees() removes them all. */
export async function writeTree(files: Record<string, string | Uint8Array>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vb-deploy-'));
  trees.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

export async function cleanupTrees(): Promise<void> {
  await Promise.all(trees.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** A raw HTTP request whose path is sent exactly as given (no URL normalisation of `..`). */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Deploys a package in one step (prepareandactivate), expecting 200; the config server's answer. */
export async function deployPackage(configUrl: string, files: Record<string, string>): Promise<any> {
  const res = await rawRequest(
    configUrl,
    'POST',
    '/application/v2/tenant/default/prepareandactivate',
    zipFiles(files),
    { 'content-type': 'application/zip' },
  );
  expect(res.status, res.text).toBe(200);
  return res.json;
}

/** Polls `check` until it returns a value (not undefined), within a bound. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const appPath =
  '/application/v2/tenant/default/application/default/environment/prod/region/default/instance/default';

/** music.sd with one field's block replaced (fields are in the sample schema). */
export function withMusicField(
  files: Record<string, string>,
  field: string,
  replacement: string,
): Record<string, string> {
  const sd = files['schemas/music.sd'];
  const re = new RegExp(`field ${field} type [^{]+\\{[^}]*\\}`);
  if (!re.test(sd)) throw new Error(`no field ${field} in music.sd`);
  return { ...files, 'schemas/music.sd': sd.replace(re, replacement) };
}
