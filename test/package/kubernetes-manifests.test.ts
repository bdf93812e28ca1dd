import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { applyReplacements, kubectl, kubectlKustomize, type Manifest } from './kustomization.js';

/**
 * examples/kubernetes/ against the Kubernetes API's schemas (kubernetes-models, which carries them: no cluster,
 * no network), and what the fleet needs of them beyond the schema: the image pinned to this version and started
 * directly (nothing downloaded at pod start), the shard count written once (each Job's folder is applied with
 * `kubectl apply -k`, whose kustomization.yaml copies it where else it is needed), the volume the Jobs mount
 * declared, the pods not root.
 */

const root = join(import.meta.dirname, '../..');
const dir = join(root, 'examples/kubernetes');
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

const models = {
  'batch/v1 Job': Job,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 Pod': Pod,
} as const;

/** The YAML files under examples/kubernetes/ (paths relative to it), kustomization.yaml files aside. */
function yamlFiles(under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true })
    .flatMap((e) => {
      const path = under === '' ? e.name : `${under}/${e.name}`;
      if (e.isDirectory()) return yamlFiles(path);
      return e.name.endsWith('.yaml') && e.name !== 'kustomization.yaml' ? [path] : [];
    })
    .sort();
}

function manifests(): { file: string; manifest: Manifest }[] {
  return yamlFiles().flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => {
      expect(doc.errors, file).toEqual([]);
      return { file, manifest: doc.toJS() as Manifest };
    }),
  );
}

function validate(manifest: Manifest): void {
  const Model = models[`${manifest.apiVersion} ${manifest.kind}` as keyof typeof models];
  expect(Model, `${manifest.apiVersion} ${manifest.kind}: no schema here for it`).toBeDefined();
  new Model(manifest).validate();
}

interface JobSpec {
  completions: number;
  parallelism?: number;
  maxFailedIndexes?: number;
  template: {
    spec: {
      securityContext: { runAsNonRoot: boolean; runAsUser: number };
      containers: { image: string; command: string[]; args: string[]; env: { name: string; value?: string }[] }[];
      volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[];
    };
  };
}

const jobs = () =>
  manifests()
    .filter(({ manifest }) => manifest.kind === 'Job')
    .map(({ file, manifest }) => ({ file, spec: manifest.spec as JobSpec }));

describe('examples/kubernetes', () => {
  it('every manifest is valid against the Kubernetes schemas', () => {
    const all = manifests();
    expect(all.map(({ file, manifest }) => `${file}: ${manifest.kind}`)).toEqual([
      'data-loader.yaml: Pod',
      'data-pvc.yaml: PersistentVolumeClaim',
      'feed/feed-job.yaml: Job',
      'visit/visit-job.yaml: Job',
    ]);
    for (const { manifest } of all) validate(manifest);
  });

  it('the validation bites: a count written as a string and an argument written as a number are refused', () => {
    const [{ manifest }] = manifests().filter(({ file }) => file === 'feed/feed-job.yaml');
    const spec = manifest.spec as JobSpec;
    expect(() => validate({ ...manifest, spec: { ...spec, completions: '4' } })).toThrow(/completions/);
    const container = spec.template.spec.containers[0];
    const args = [...container.args.slice(0, -1), 4];
    const template = { spec: { ...spec.template.spec, containers: [{ ...container, args }] } };
    expect(() => validate({ ...manifest, spec: { ...spec, template } })).toThrow(/args/);
  });

  it('the Jobs run the image of this version, starting its executable: no npx, nothing downloaded at pod start', () => {
    for (const { file, spec } of jobs()) {
      const [container] = spec.template.spec.containers;
      expect(container.image, file).toMatch(new RegExp(`/vespa-bulk:${own.version.replace(/\./g, '\\.')}$`));
      expect(container.command, file).toEqual(['/usr/local/bin/vespa-bulk']);
      expect(JSON.stringify(spec), file).not.toMatch(/npx|npm |node:\d|latest/);
      expect(spec.template.spec.securityContext, file).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    }
  });

  /** Each Job's folder, the variable its count argument reads, and where that argument is. */
  const counted = [
    { folder: 'feed', variable: 'SHARDS', flag: '--shard', arg: (n: string) => `$(JOB_COMPLETION_INDEX)/${n}` },
    { folder: 'visit', variable: 'SLICES', flag: '--slices', arg: (n: string) => n },
  ];
  const countIn = (spec: JobSpec, variable: string) =>
    spec.template.spec.containers[0].env.find((e) => e.name === variable)?.value;

  it('the shard count is written once, in completions: applied with -k, parallelism, maxFailedIndexes and the argument get it', () => {
    for (const { folder, variable, flag, arg } of counted) {
      const [{ spec }] = jobs().filter(({ file }) => file.startsWith(`${folder}/`));
      // Written nowhere else in the Job: the other places are made or filled by kustomization.yaml.
      expect(spec.parallelism, folder).toBeUndefined();
      expect(spec.maxFailedIndexes, folder).toBeUndefined();
      const { args } = spec.template.spec.containers[0];
      expect(args[args.indexOf(flag) + 1], folder).toBe(arg(`$(${variable})`));
      // Applied with -f, the placeholder is no count: the pod stops with a usage error naming it.
      expect(countIn(spec, variable), folder).not.toMatch(/^\d+$/);
      expect(JSON.stringify(spec).match(new RegExp(`\\b${spec.completions}\\b`, 'g')), folder).toHaveLength(1);

      const [rendered] = applyReplacements(join(dir, folder));
      validate(rendered);
      const out = rendered.spec as JobSpec;
      expect(out.parallelism, folder).toBe(spec.completions);
      expect(out.maxFailedIndexes, folder).toBe(spec.completions);
      expect(countIn(out, variable), folder).toBe(String(spec.completions));
    }
  });

  it.skipIf(kubectl() === undefined)(
    "kubectl's kustomize renders each Job's folder as the tests that run the Jobs do, and a changed completions reaches every place",
    () => {
      for (const { folder, variable } of counted) {
        const rendered = kubectlKustomize(join(dir, folder));
        expect(rendered, folder).toEqual(applyReplacements(join(dir, folder)));
        for (const m of rendered) validate(m);

        const copy = join(tmpdir(), `vespa-bulk-kustomize-${process.pid}-${folder}`);
        cpSync(join(dir, folder), copy, { recursive: true });
        const file = join(copy, `${folder}-job.yaml`);
        const text = readFileSync(file, 'utf8');
        writeFileSync(file, text.replace(/^( {2}completions:) \d+/m, '$1 7'));
        const [changed] = kubectlKustomize(copy);
        rmSync(copy, { recursive: true, force: true });
        const spec = changed.spec as JobSpec;
        expect([spec.completions, spec.parallelism, spec.maxFailedIndexes, countIn(spec, variable)], folder).toEqual([
          7,
          7,
          7,
          '7',
        ]);
      }
    },
  );

  it('the volume the Jobs mount is declared, and the loader pod mounts the same', () => {
    const claims = manifests()
      .filter(({ manifest }) => manifest.kind === 'PersistentVolumeClaim')
      .map(({ manifest }) => manifest.metadata.name);
    expect(claims).toEqual(['vespa-bulk-data']);
    const mounted = manifests().flatMap(({ manifest }) => {
      const spec = (manifest.kind === 'Job' ? (manifest.spec as JobSpec).template.spec : manifest.spec) as {
        volumes?: JobSpec['template']['spec']['volumes'];
      };
      return (spec.volumes ?? []).flatMap((v) => v.persistentVolumeClaim?.claimName ?? []);
    });
    expect(new Set(mounted)).toEqual(new Set(claims));
  });
});
