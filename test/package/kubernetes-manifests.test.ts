import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

/**
 * examples/kubernetes/ against the Kubernetes API's schemas (kubernetes-models, which carries them: no cluster,
 * no network), and what the fleet needs of them beyond the schema: the image pinned to this version and started
 * directly (nothing downloaded at pod start), the shard count the same wherever it is written, the volume the
 * Jobs mount declared, the pods not root.
 */

const root = join(import.meta.dirname, '../..');
const dir = join(root, 'examples/kubernetes');
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

type Manifest = { apiVersion: string; kind: string; metadata: { name: string } } & Record<string, unknown>;

const models = {
  'batch/v1 Job': Job,
  'v1 PersistentVolumeClaim': PersistentVolumeClaim,
  'v1 Pod': Pod,
} as const;

function manifests(): { file: string; manifest: Manifest }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((file) =>
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
  parallelism: number;
  maxFailedIndexes: number;
  template: {
    spec: {
      securityContext: { runAsNonRoot: boolean; runAsUser: number };
      containers: { image: string; command: string[]; args: string[] }[];
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
      'feed-job.yaml: Job',
      'visit-job.yaml: Job',
    ]);
    for (const { manifest } of all) validate(manifest);
  });

  it('the validation bites: a count written as a string and an argument written as a number are refused', () => {
    const [{ manifest }] = manifests().filter(({ file }) => file === 'feed-job.yaml');
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

  it('the shard count is the same in completions, parallelism, maxFailedIndexes and the arguments', () => {
    for (const { file, spec } of jobs()) {
      const n = spec.completions;
      expect(spec.parallelism, file).toBe(n);
      expect(spec.maxFailedIndexes, file).toBe(n);
      const { args } = spec.template.spec.containers[0];
      const shard = args[args.indexOf('--shard') + 1];
      const slices = args[args.indexOf('--slices') + 1];
      expect(file === 'feed-job.yaml' ? shard : slices, file).toBe(
        file === 'feed-job.yaml' ? `$(JOB_COMPLETION_INDEX)/${n}` : String(n),
      );
    }
  });

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
