import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/**
 * A folder of examples/kubernetes/ as `kubectl apply -k` sends it: its kustomization.yaml's resources with the
 * replacements applied. `kubectl kustomize` renders it where kubectl is installed; `applyReplacements` below
 * does the same for the one shape the examples use (a field copied into fields of the same Job), so the tests
 * that run the Jobs need no kubectl, and the manifests' test checks both give the same result.
 */

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string } } & Record<string, unknown>;

interface Replacement {
  source: { kind: string; name: string; fieldPath: string };
  targets: { select: { kind: string; name: string }; fieldPaths: string[]; options?: { create?: boolean } }[];
}

interface Kustomization {
  resources: string[];
  replacements?: Replacement[];
}

/** kubectl on PATH, if any. */
export function kubectl(): string | undefined {
  const found = spawnSync('bash', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? undefined : found;
}

/** `kubectl kustomize folder`, parsed. */
export function kubectlKustomize(folder: string): Manifest[] {
  const r = spawnSync(kubectl() ?? 'kubectl', ['kustomize', folder], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${folder} failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Manifest);
}

/** One step of a field path: a key, or the element of a list whose `name` is the one given (`[name=x]`). */
function step(node: unknown, part: string, create: boolean): { parent: Record<string, unknown>; key: string } {
  const selector = /^\[name=(.+)\]$/.exec(part);
  if (selector !== null) {
    const list = node as { name?: string }[];
    const index = Array.isArray(list) ? list.findIndex((e) => e.name === selector[1]) : -1;
    if (index < 0) throw new Error(`no element ${part}`);
    return { parent: list as unknown as Record<string, unknown>, key: String(index) };
  }
  const parent = node as Record<string, unknown>;
  if (typeof parent !== 'object' || parent === null || (!(part in parent) && !create))
    throw new Error(`no field ${part}`);
  return { parent, key: part };
}

function place(root: unknown, path: string, create: boolean): { parent: Record<string, unknown>; key: string } {
  const parts = path.split('.');
  let node = root;
  for (const part of parts.slice(0, -1)) {
    const { parent, key } = step(node, part, false);
    node = parent[key];
  }
  return step(node, parts.at(-1)!, create);
}

/** The kustomization in `folder` rendered without kubectl: its resources, each replacement applied. */
export function applyReplacements(folder: string): Manifest[] {
  const k = parse(readFileSync(join(folder, 'kustomization.yaml'), 'utf8')) as Kustomization;
  const manifests = k.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((d) => d.toJS() as Manifest),
  );
  const find = (kind: string, name: string) => {
    const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
    if (m === undefined) throw new Error(`${kind} ${name} is not in ${folder}`);
    return m;
  };
  for (const { source, targets } of k.replacements ?? []) {
    const from = place(find(source.kind, source.name), source.fieldPath, false);
    const value = from.parent[from.key];
    for (const target of targets)
      for (const path of target.fieldPaths) {
        const to = place(find(target.select.kind, target.select.name), path, target.options?.create === true);
        // kustomize keeps a string field a string.
        to.parent[to.key] = typeof to.parent[to.key] === 'string' ? String(value) : value;
      }
  }
  return manifests;
}
