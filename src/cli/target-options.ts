import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import type { Argv } from 'yargs';
import type { SecurityOptions } from '../http/tls.js';

import { resolveTarget, type ResolvedTarget } from './target/resolve.js';
import { securityFromArgs, type SecurityArgs } from './security-options.js';
import { readConfigLayers, vespaCliHome } from './target/config-files.js';

/**
 * The official `vespa` CLI's target flags, and the one place every command turns them (with its config files
 * and variables) into an endpoint and credentials. Our own flags and VESPA_BULK_* variables always win.
 */
export interface TargetArgs {
  target?: string;
  application?: string;
  instance?: string;
  'container-cluster'?: string;
  zone?: string;
}

const group = 'Target:';

/** `-t`, `-a`, `-i`, `-C`, `-z`; `application`/`instance` are left out where a command has its own (deploy). */
export function withTargetOptions<T>(y: Argv<T>, options: { applicationFlags?: boolean } = {}): Argv<T & TargetArgs> {
  let b = y
    .option('target', {
      alias: 't',
      type: 'string',
      describe:
        "local (http://127.0.0.1:8080), an http(s) URL, or cloud/hosted with VESPA_CLI_ENDPOINTS (default: 'target' in .vespa/config.yaml or $VESPA_CLI_HOME/config.yaml, else local)",
      group,
    })
    .option('container-cluster', {
      alias: 'C',
      type: 'string',
      describe: "Container cluster, to pick one of several VESPA_CLI_ENDPOINTS (the official CLI's --cluster)",
      group,
    })
    .option('zone', { alias: 'z', type: 'string', describe: 'Zone <environment>.<region> (cloud targets)', group });
  if (options.applicationFlags !== false) {
    b = b
      .option('application', {
        alias: 'a',
        type: 'string',
        describe: 'Application <tenant>.<app>[.<instance>]: where a cloud target keeps its key pair',
        group,
      })
      .option('instance', { alias: 'i', type: 'string', describe: 'Instance of --application', group });
  }
  return b;
}

export interface Connection {
  /** Base URL of the service. */
  url: string;
  security: SecurityOptions;
  target: ResolvedTarget;
}

/**
 * Endpoint and credentials of one command. The key pair of the official CLI's home directory is used only
 * when no flag or variable names a certificate or key, and only for https (a cleartext endpoint has no use
 * for it, and an expired one there should not stop a local feed).
 */
export function connectionFromArgs(
  args: TargetArgs & SecurityArgs,
  headers: Record<string, string>,
  service: 'document' | 'config' = 'document',
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Connection {
  const userHome = homedir();
  const home = vespaCliHome(env, userHome);
  const target = resolveTarget({
    flags: {
      target: args.target,
      application: args.application,
      instance: args.instance,
      containerCluster: args['container-cluster'],
      zone: args.zone,
    },
    layers: readConfigLayers(cwd, home, userHome),
    env,
    vespaCliHome: home,
    userHome,
    service,
  });
  const security = securityFromArgs(args, headers, env);
  const pair = target.keyPairFiles;
  if (
    security.cert === undefined &&
    security.key === undefined &&
    /^https:/i.test(target.url) &&
    existsSync(pair.cert) &&
    existsSync(pair.key)
  ) {
    security.cert = pair.cert;
    security.key = pair.key;
  }
  return { url: target.url, security, target };
}

/** One line on stderr saying where the target came from, when not from the command line. */
export function describeTargetOrigin(c: Connection): string | undefined {
  if (c.target.from.startsWith('--') || c.target.from === 'default') return undefined;
  return `target ${c.url} (from ${c.target.from})${c.security.cert !== undefined && c.security.cert === c.target.keyPairFiles.cert ? `, key pair ${c.target.keyPairFiles.cert}` : ''}`;
}
