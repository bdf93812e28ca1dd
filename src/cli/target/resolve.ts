import { createRequire } from 'node:module';
import { join } from 'node:path';
import { VespaBulkError } from '../../core/errors.js';

/**
 * Where a command sends its requests when our own flags do not say, read the way the official `vespa` CLI
 * reads it, so that a user of that CLI need not repeat a set-up it already holds. Pure: the files are read
 * by the caller (src/cli/target/config-files.ts) and handed in as layers.
 */

/** The official CLI's target-selecting flags, as given on our command line. */
export interface TargetFlags {
  /** `-t/--target`: `local`, `cloud`, `hosted` or an http(s) URL. */
  target?: string;
  /** `-a/--application`: `tenant.application[.instance]`. */
  application?: string;
  /** `-i/--instance`: overrides the instance of `application`. */
  instance?: string;
  /** The container cluster (the official `-C/--cluster`): picks one of several `VESPA_CLI_ENDPOINTS`. */
  containerCluster?: string;
  /** `-z/--zone`: `environment.region`. */
  zone?: string;
}

/** One `config.yaml` of the official CLI: flat keys (`target`, `application`, `instance`, `cluster`, `zone`). */
export interface ConfigLayer {
  /** Path of the file, for messages. */
  file: string;
  values: Readonly<Record<string, string>>;
}

export interface TargetInput {
  flags: TargetFlags;
  /** Most preferred first: the nearest `.vespa/config.yaml`, then `$VESPA_CLI_HOME/config.yaml`. */
  layers: readonly ConfigLayer[];
  env: Readonly<Record<string, string | undefined>>;
  /** `$VESPA_CLI_HOME`, or `~/.vespa`. */
  vespaCliHome: string;
  /** The user's home directory (hosted targets keep their Athenz key pair in `~/.athenz`). */
  userHome: string;
  /** Which interface the command talks to: the container's document API or the config server. */
  service: 'document' | 'config';
}

export interface ApplicationId {
  tenant: string;
  application: string;
  instance: string;
}

export interface ResolvedTarget {
  kind: 'local' | 'url' | 'cloud' | 'hosted';
  /** Base URL of the service asked for. */
  url: string;
  /** Where the target came from: `--target`, a config file path, `VESPA_CLI_ENDPOINTS`, or `default`. */
  from: string;
  application: ApplicationId;
  /** Set when `application` was given (flag or file) rather than defaulted. */
  applicationGiven: boolean;
  zone?: { environment: string; region: string };
  /** The data-plane key pair the official CLI would use when no variable names one. */
  keyPairFiles: { cert: string; key: string };
}

export const localDocumentUrl = 'http://127.0.0.1:8080';
export const localConfigUrl = 'http://127.0.0.1:19071';
const defaultApplication: ApplicationId = { tenant: 'default', application: 'application', instance: 'default' };

/** The values of a `config.yaml` as strings; anything but a flat mapping is refused, naming the file. */
export function parseConfigYaml(text: string, file: string): ConfigLayer {
  let doc: unknown;
  try {
    // Loaded when a config file is there to read (most runs have none); required, since this runs synchronously.
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    doc = parse(text);
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `${file}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  if (doc === null || doc === undefined) return { file, values: {} };
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new VespaBulkError('VB_USAGE', `${file}: expected keys such as 'target: <url>', one per line`);
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') values[k] = String(v);
  }
  return { file, values };
}

/** The first non-empty value of `key`: the flag, then each layer in order. */
function pick(
  flag: string | undefined,
  key: string,
  layers: readonly ConfigLayer[],
): { value: string; from: string } | undefined {
  if (flag !== undefined && flag !== '') return { value: flag, from: `--${key}` };
  for (const layer of layers) {
    const v = layer.values[key];
    if (v !== undefined && v !== '') return { value: v, from: layer.file };
  }
  return undefined;
}

/** `tenant.application[.instance]`, as the official CLI spells an application. */
export function parseApplicationId(text: string, from: string): ApplicationId {
  const parts = text.split('.');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
    throw new VespaBulkError(
      'VB_USAGE',
      `application '${text}' (from ${from}): expected <tenant>.<application>[.<instance>]`,
    );
  }
  return { tenant: parts[0], application: parts[1], instance: parts[2] ?? 'default' };
}

/** `VESPA_CLI_ENDPOINTS`: `{"endpoints":[{"cluster":"...","url":"..."}]}`, as a map from cluster to URL. */
export function parseEndpoints(text: string): Map<string, string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `VESPA_CLI_ENDPOINTS is not valid JSON: ${(err as Error).message}`);
  }
  const list = (doc as { endpoints?: unknown } | null)?.endpoints;
  if (!Array.isArray(list) || list.length === 0)
    throw new VespaBulkError(
      'VB_USAGE',
      'VESPA_CLI_ENDPOINTS: expected {"endpoints":[{"cluster":"<name>","url":"<url>"}, ...]} with at least one endpoint',
    );
  const out = new Map<string, string>();
  for (const e of list as Array<{ cluster?: unknown; url?: unknown }>) {
    if (typeof e?.url !== 'string' || !/^https?:\/\//.test(e.url))
      throw new VespaBulkError(
        'VB_USAGE',
        `VESPA_CLI_ENDPOINTS: every endpoint needs an http(s) "url" (got ${JSON.stringify(e)})`,
      );
    out.set(typeof e.cluster === 'string' ? e.cluster : '', e.url);
  }
  return out;
}

function endpointOf(endpoints: Map<string, string>, cluster: string | undefined): string {
  if (cluster !== undefined) {
    const url = endpoints.get(cluster);
    if (url === undefined)
      throw new VespaBulkError(
        'VB_USAGE',
        `VESPA_CLI_ENDPOINTS has no endpoint for container cluster '${cluster}', only ${[...endpoints.keys()].map((c) => `'${c}'`).join(', ')}`,
      );
    return url;
  }
  if (endpoints.size > 1) {
    throw new VespaBulkError(
      'VB_USAGE',
      `VESPA_CLI_ENDPOINTS lists several container clusters (${[...endpoints.keys()].map((c) => `'${c}'`).join(', ')}): pick one with -C/--container-cluster`,
    );
  }
  return [...endpoints.values()][0];
}

/**
 * The target of one command, in this order: `--target`, then `target` in the nearest `.vespa/config.yaml`,
 * then in `$VESPA_CLI_HOME/config.yaml`, else `local`. `application`, `instance`, `cluster` and `zone` are
 * picked the same way, key by key, as the official CLI does.
 */
export function resolveTarget(input: TargetInput): ResolvedTarget {
  const { flags, layers, env } = input;
  const target = pick(flags.target, 'target', layers) ?? { value: 'local', from: 'default' };
  const appPick = pick(flags.application, 'application', layers);
  const application = appPick ? parseApplicationId(appPick.value, appPick.from) : { ...defaultApplication };
  const instance = pick(flags.instance, 'instance', layers);
  if (instance) application.instance = instance.value;
  const zonePick = pick(flags.zone, 'zone', layers);
  let zone: ResolvedTarget['zone'];
  if (zonePick) {
    const parts = zonePick.value.split('.');
    if (parts.length !== 2 || parts.some((p) => p === ''))
      throw new VespaBulkError(
        'VB_USAGE',
        `zone '${zonePick.value}' (from ${zonePick.from}): expected <environment>.<region>, e.g. prod.default`,
      );
    zone = { environment: parts[0], region: parts[1] };
  }
  const cluster = pick(flags.containerCluster, 'cluster', layers)?.value;
  const base = { application, applicationGiven: appPick !== undefined, ...(zone && { zone }) };
  // A URL or local target keeps its key pair in default.application.default whatever the application: the
  // official CLI kept that location when its default application changed, and so do we.
  const defaultPair = keyPairIn(join(input.vespaCliHome, 'default.application.default'));
  const value = target.value;
  if (value === 'local') {
    return {
      kind: 'local',
      url: input.service === 'config' ? localConfigUrl : localDocumentUrl,
      from: target.from,
      ...base,
      keyPairFiles: defaultPair,
    };
  }
  if (/^https?:\/\//i.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new VespaBulkError('VB_USAGE', `target '${value}' (from ${target.from}) is not a valid URL`);
    }
    return { kind: 'url', url: value.replace(/\/+$/, ''), from: target.from, ...base, keyPairFiles: defaultPair };
  }
  if (value === 'cloud' || value === 'hosted') {
    const keyPairFiles =
      value === 'hosted'
        ? { cert: join(input.userHome, '.athenz', 'cert'), key: join(input.userHome, '.athenz', 'key') }
        : keyPairIn(
            join(input.vespaCliHome, `${application.tenant}.${application.application}.${application.instance}`),
          );
    const refuse = (why: string): never => {
      throw new VespaBulkError('VB_USAGE', `target '${value}' (from ${target.from}): ${why}`);
    };
    if (input.service === 'config')
      refuse(
        'vespa-bulk does not deploy through the Vespa Cloud control plane; give the config server with --config-url (or -t <url>)',
      );
    const endpoints = env.VESPA_CLI_ENDPOINTS;
    if (endpoints === undefined || endpoints === '') {
      refuse(
        'its endpoints are found through the Vespa Cloud control plane, which vespa-bulk does not use: pass the endpoint URL with -t (e.g. -t https://<name>.<tenant>.aws-us-east-1c.z.vespa-app.cloud), or set VESPA_CLI_ENDPOINTS',
      );
    }
    if (value === 'cloud' && !base.applicationGiven)
      refuse('needs the application (-a <tenant>.<application>[.<instance>]): its key pair is kept per application');
    return {
      kind: value,
      url: endpointOf(parseEndpoints(endpoints!), cluster).replace(/\/+$/, ''),
      from: 'VESPA_CLI_ENDPOINTS',
      ...base,
      keyPairFiles,
    };
  }
  // A host and port without a scheme is the usual slip (the official CLI takes only URLs too): name the URL meant.
  const hostPort =
    /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})(\/.*)?$/.test(value) ||
    /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(value);
  throw new VespaBulkError(
    'VB_USAGE',
    `target '${value}' (from ${target.from}): expected local, cloud, hosted or an http(s) URL${hostPort ? ` (did you mean http://${value}?)` : ''}`,
  );
}

function keyPairIn(dir: string): { cert: string; key: string } {
  return { cert: join(dir, 'data-plane-public-cert.pem'), key: join(dir, 'data-plane-private-key.pem') };
}
