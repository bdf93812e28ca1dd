import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isVespaBulkError } from '../../src/core/errors.js';
import { readConfigLayers } from '../../src/cli/target/config-files.js';
import { parseConfigYaml, resolveTarget, type TargetInput } from '../../src/cli/target/resolve.js';
import { securityFromEnv } from '../../src/cli/security-options.js';
import { clustersFromMessage } from '../../src/visit/discover-cluster.js';

const home = '/home/u/.vespa';
const input = (over: Partial<TargetInput> = {}): TargetInput => ({
  flags: {},
  layers: [],
  env: {},
  vespaCliHome: home,
  userHome: '/home/u',
  service: 'document',
  ...over,
});
const local = { file: '/w/.vespa/config.yaml', values: { target: 'http://local-file:8080', application: 'lt.la' } };
const global = {
  file: `${home}/config.yaml`,
  values: { target: 'https://global-file:443', application: 'gt.ga.gi', zone: 'dev.aws-us-east-1c' },
};

function usage(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(isVespaBulkError(err, 'VB_USAGE'), String(err)).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected VB_USAGE');
}

describe('resolveTarget', () => {
  it('takes the flag, then the nearest .vespa/config.yaml, then $VESPA_CLI_HOME/config.yaml, key by key, else local', () => {
    expect(resolveTarget(input({ flags: { target: 'http://flag:1' }, layers: [local, global] }))).toMatchObject({
      kind: 'url',
      url: 'http://flag:1',
      from: '--target',
    });
    const fromLocal = resolveTarget(input({ layers: [local, global] }));
    expect(fromLocal).toMatchObject({
      url: 'http://local-file:8080',
      from: local.file,
      application: { tenant: 'lt', application: 'la', instance: 'default' },
      zone: { environment: 'dev', region: 'aws-us-east-1c' },
    });
    expect(resolveTarget(input({ layers: [global] }))).toMatchObject({
      url: 'https://global-file:443',
      application: { instance: 'gi' },
    });
    expect(resolveTarget(input({ flags: { instance: 'i2' }, layers: [global] })).application.instance).toBe('i2');
    expect(resolveTarget(input())).toMatchObject({ kind: 'local', url: 'http://127.0.0.1:8080', from: 'default' });
    expect(resolveTarget(input({ service: 'config' })).url).toBe('http://127.0.0.1:19071');
  });

  it('keeps the key pair of a URL or local target in default.application.default, whatever the application', () => {
    expect(resolveTarget(input({ layers: [local] })).keyPairFiles).toEqual({
      cert: `${home}/default.application.default/data-plane-public-cert.pem`,
      key: `${home}/default.application.default/data-plane-private-key.pem`,
    });
  });

  it('refuses cloud and hosted without VESPA_CLI_ENDPOINTS, saying to pass the URL with -t', () => {
    expect(usage(() => resolveTarget(input({ flags: { target: 'cloud', application: 't.a' } })))).toMatch(
      /pass the endpoint URL with -t/,
    );
    expect(usage(() => resolveTarget(input({ layers: [{ file: 'f', values: { target: 'hosted' } }] })))).toMatch(
      /target 'hosted' \(from f\).*-t/,
    );
    expect(usage(() => resolveTarget(input({ flags: { target: 'nowhere' } })))).toMatch(
      /expected local, cloud, hosted or an http\(s\) URL/,
    );
  });

  it('takes a cloud endpoint from VESPA_CLI_ENDPOINTS, by container cluster when there are several', () => {
    const one = JSON.stringify({ endpoints: [{ cluster: 'default', url: 'https://one.example:443/' }] });
    const two = JSON.stringify({
      endpoints: [
        { cluster: 'a', url: 'https://a.example' },
        { cluster: 'b', url: 'https://b.example' },
      ],
    });
    const cloud = resolveTarget(
      input({ flags: { target: 'cloud', application: 't.a.i' }, env: { VESPA_CLI_ENDPOINTS: one } }),
    );
    expect(cloud).toMatchObject({
      kind: 'cloud',
      url: 'https://one.example:443',
      keyPairFiles: { cert: `${home}/t.a.i/data-plane-public-cert.pem` },
    });
    expect(
      resolveTarget(
        input({
          flags: { target: 'cloud', application: 't.a', containerCluster: 'b' },
          env: { VESPA_CLI_ENDPOINTS: two },
        }),
      ).url,
    ).toBe('https://b.example');
    expect(
      resolveTarget(
        input({
          flags: { target: 'hosted' },
          layers: [{ file: 'f', values: { cluster: 'a' } }],
          env: { VESPA_CLI_ENDPOINTS: two },
        }),
      ).keyPairFiles.cert,
    ).toBe('/home/u/.athenz/cert');
    expect(
      usage(() =>
        resolveTarget(input({ flags: { target: 'cloud', application: 't.a' }, env: { VESPA_CLI_ENDPOINTS: two } })),
      ),
    ).toMatch(/several container clusters \('a', 'b'\).*-C/);
    expect(
      usage(() =>
        resolveTarget(
          input({ flags: { target: 'cloud', application: 't.a' }, env: { VESPA_CLI_ENDPOINTS: '{"endpoints":[]}' } }),
        ),
      ),
    ).toMatch(/at least one endpoint/);
  });

  it('names the place of a bad application or zone', () => {
    expect(
      usage(() => resolveTarget(input({ layers: [{ file: '/x/config.yaml', values: { application: 'justone' } }] }))),
    ).toMatch(/'justone' \(from \/x\/config.yaml\)/);
    expect(usage(() => resolveTarget(input({ flags: { zone: 'prod' } })))).toMatch(/<environment>.<region>/);
  });
});

describe('config.yaml', () => {
  it('parses the flat layout the official CLI writes, and names the file of broken YAML', () => {
    expect(parseConfigYaml('target: https://h:4443\napplication: t.a.i\nquiet: true\n', 'f').values).toEqual({
      target: 'https://h:4443',
      application: 't.a.i',
      quiet: 'true',
    });
    expect(parseConfigYaml('', 'f').values).toEqual({});
    expect(usage(() => parseConfigYaml('target: [unclosed', '/p/config.yaml'))).toMatch(
      /^\/p\/config.yaml: not valid YAML/,
    );
  });

  it('finds .vespa/config.yaml in a parent of the working directory, before $VESPA_CLI_HOME', () => {
    const root = mkdtempSync(join(tmpdir(), 'vb-layers-'));
    try {
      mkdirSync(join(root, 'project', '.vespa'), { recursive: true });
      mkdirSync(join(root, 'project', 'sub', 'deeper'), { recursive: true });
      mkdirSync(join(root, 'clihome'));
      writeFileSync(join(root, 'project', '.vespa', 'config.yaml'), 'target: http://project:1\n');
      writeFileSync(join(root, 'clihome', 'config.yaml'), 'target: http://global:2\n');
      const layers = readConfigLayers(
        join(root, 'project', 'sub', 'deeper'),
        join(root, 'clihome'),
        '/nonexistent-home',
      );
      expect(layers.map((l) => l.values.target)).toEqual(['http://project:1', 'http://global:2']);
      // The walk stops at the home directory: a .vespa there is the global one, not a project's.
      expect(
        readConfigLayers(join(root, 'project', 'sub'), join(root, 'clihome'), join(root, 'project')).map(
          (l) => l.values.target,
        ),
      ).toEqual(['http://global:2']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('data-plane variables', () => {
  const pem = (what: string) => `-----BEGIN ${what}-----\nAAAA\n-----END ${what}-----\n`;
  it('takes PEM text over the *_FILE variables, ours over both, and TRUST_ALL as skipping verification', () => {
    const env = {
      VESPA_CLI_DATA_PLANE_CERT: pem('CERTIFICATE'),
      VESPA_CLI_DATA_PLANE_CERT_FILE: '/f/cert.pem',
      VESPA_CLI_DATA_PLANE_KEY_FILE: '/f/key.pem',
      VESPA_CLI_DATA_PLANE_CA_CERT_FILE: '/f/ca.pem',
      VESPA_CLI_DATA_PLANE_TRUST_ALL: 'true',
    };
    expect(securityFromEnv(env)).toEqual({
      cert: pem('CERTIFICATE'),
      key: '/f/key.pem',
      ca: '/f/ca.pem',
      insecure: true,
      origin: { cert: 'VESPA_CLI_DATA_PLANE_CERT' },
    });
    expect(securityFromEnv({ ...env, VESPA_BULK_CERT: '/ours.pem' }).cert).toBe('/ours.pem');
    expect(securityFromEnv({ VESPA_CLI_DATA_PLANE_TRUST_ALL: 'false' }).insecure).toBeUndefined();
    expect(usage(() => securityFromEnv({ VESPA_CLI_DATA_PLANE_KEY: '/a/path.pem' }))).toMatch(
      /VESPA_CLI_DATA_PLANE_KEY holds the PEM text itself.*VESPA_CLI_DATA_PLANE_KEY_FILE/,
    );
  });
});

describe('clustersFromMessage', () => {
  it('reads the cluster names from the service answer to cluster=*', () => {
    expect(clustersFromMessage("Your Vespa deployment has no content cluster '*', only 'content', 'archive'")).toEqual([
      'content',
      'archive',
    ]);
    expect(clustersFromMessage("Your Vespa deployment has no content cluster '*', only 'music'")).toEqual(['music']);
    expect(clustersFromMessage("Must set 'cluster' parameter")).toBeUndefined();
  });
});
