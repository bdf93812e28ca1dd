import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import { existsSync } from 'node:fs';
import type { Argv, CommandModule, PositionalOptions } from 'yargs';
import { VespaBulkError } from '../../core/errors.js';
import { activateSession, prepareSession, uploadPackage } from '../../deploy/session.js';
import {
  deleteApplication,
  getApplication,
  getReindexing,
  listContent,
  readContent,
  restartServices,
  triggerReindex,
} from '../../deploy/application.js';
import { deploy } from '../../deploy/deploy.js';
import { DeployError } from '../../deploy/config-request.js';
import {
  getConvergence,
  getServiceConvergence,
  waitForConvergence,
  waitForServiceConvergence,
} from '../../deploy/converge.js';
import { readPackage } from '../../deploy/package.js';
import { recallSession, rememberSession, sessionStateFile } from '../../deploy/session-state.js';
import { resolveTarget, type DeployTarget } from '../../deploy/target.js';
import type { PrepareResult } from '../../deploy/types.js';
import { repeatable } from '../repeatable.js';
import { withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { connectionFromArgs, withTargetOptions, type TargetArgs as DropInTargetArgs } from '../target-options.js';
import {
  contentUrlToPath,
  formatApplicationStatus,
  formatChangeActions,
  formatConvergence,
  formatLog,
  formatReindexing,
} from '../deploy-format.js';
import { parseHeaderFlags } from '../header-flags.js';

/**
 * `vespa-bulk deploy <dir|zip>` and its family (`deploy prepare|activate|status|converge|content|restart|
 * reindex|reindexing|delete`), plus top-level `prepare` and `activate` as users of `vespa prepare` expect.
 * Data (a status, a listing, a file, and --json results) go to stdout; what a change did, the prepare log and
 * progress go to stderr.
 */

interface TargetArgs extends SecurityArgs, Pick<DropInTargetArgs, 'target' | 'zone'> {
  'config-url'?: string;
  tenant?: string;
  application?: string;
  environment?: string;
  region?: string;
  instance?: string;
  header?: string[];
  json: boolean;
}

function withTarget<T>(y: Argv<T>): Argv<T & TargetArgs> {
  // No yargs defaults for the application and zone: unset, they come from the official CLI's config files.
  return withTargetOptions(withSecurityOptions(y), { applicationFlags: false })
    .option('config-url', {
      type: 'string',
      describe: 'Config server URL; wins over --target (default: the target, local = http://127.0.0.1:19071)',
      group: 'Target:',
    })
    .option('tenant', { type: 'string', describe: '(default: default)', group: 'Target:' })
    .option('application', {
      alias: 'a',
      type: 'string',
      describe: 'Application name, or <tenant>.<app>[.<instance>] as the official CLI (default: default)',
      group: 'Target:',
    })
    .option('environment', { type: 'string', describe: "(default: the zone's, else prod)", group: 'Target:' })
    .option('region', { type: 'string', describe: "(default: the zone's, else default)", group: 'Target:' })
    .option('instance', { alias: 'i', type: 'string', describe: '(default: default)', group: 'Target:' })
    .option('header', repeatable("Extra request header 'Name: value' (repeatable)", { group: 'Target:' }))
    .option('json', { type: 'boolean', default: false, describe: 'Print the raw JSON response on stdout' }) as Argv<
    T & TargetArgs
  >;
}

type FullTarget = DeployTarget & { tenant: string; application: string; instance: string };

/**
 * The config server and application: --config-url, then the target (-t, or the official CLI's config files;
 * `local` is the config server on 19071); the application from our flags, else `application`, `instance` and
 * `zone` as the official CLI keeps them.
 */
function targetOf(argv: TargetArgs): FullTarget {
  const dotted = argv.application !== undefined && argv.application.includes('.');
  const connection = connectionFromArgs(
    {
      ...argv,
      target: argv['config-url'] ?? argv.target,
      ...(dotted ? { application: argv.application } : { application: undefined }),
    },
    parseHeaderFlags(argv.header),
    'config',
  );
  const resolved = connection.target;
  const fromConfig = resolved.applicationGiven ? resolved.application : undefined;
  return {
    configUrl: connection.url,
    tenant: argv.tenant ?? fromConfig?.tenant ?? 'default',
    application: (dotted ? undefined : argv.application) ?? fromConfig?.application ?? 'default',
    environment: argv.environment ?? resolved.zone?.environment ?? 'prod',
    region: argv.region ?? resolved.zone?.region ?? 'default',
    instance: argv.instance ?? fromConfig?.instance ?? 'default',
    security: connection.security,
  };
}

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const err = (line: string): void => void process.stderr.write(`${line}\n`);
/**
 * What a command that changes something says it did: prose, so on stderr with the progress; stdout carries only
 * data (a status, a listing, a file) or, with --json, the one JSON result, so `deploy --json | jq` reads clean.
 */
const say = err;
const printJson = (value: unknown): void => out(JSON.stringify(value, null, 2));
const appName = (a: FullTarget): string => `${a.tenant}.${a.application}.${a.instance}`;

/** With --json a refused request still prints the server's body on stdout; the error itself goes to main. */
// yargs hands handlers its own argument type; each handler states the flags it reads.
function handler<A extends TargetArgs>(run: (argv: A) => Promise<void>): (argv: any) => Promise<void> {
  return async (argv: A) => {
    try {
      await run(argv);
    } catch (e) {
      if (argv.json && e instanceof DeployError && e.body !== undefined) printJson(e.body);
      throw e;
    }
  };
}

function printPrepared(prepare: PrepareResult): void {
  for (const line of formatLog(prepare.log)) err(line);
  const actions = formatChangeActions(prepare.configChangeActions);
  if (actions.length === 0) say('Config change actions: none');
  else {
    say('Config change actions (the running application needs these to serve the new package correctly):');
    for (const line of actions) say(`  ${line}`);
  }
}

interface PrepareFlags {
  'ignore-validation-errors': boolean;
  'vespa-version'?: string;
  timeout?: number;
  'dry-run': boolean;
  verbose: boolean;
}

/**
 * `--vespa-version`, also spelt `--version`/`-V` as in `vespa deploy`. yargs' own `--version` (the tool's) is
 * turned off for this command, or it would print our version and deploy nothing.
 */
function withVespaVersion<T>(y: Argv<T>, describe: string, global: boolean): Argv<T & { 'vespa-version'?: string }> {
  return y
    .version(false)
    .option('vespa-version', { type: 'string', alias: ['version', 'V'], describe, global })
    .check((a) => {
      const v = a['vespa-version'];
      if (v !== undefined && !/^\d+(\.\d+){0,2}(\.[\w-]+)?$/.test(String(v)))
        throw new VespaBulkError(
          'VB_USAGE',
          `--vespa-version (--version, -V) must be a Vespa version such as 8.1.2, not '${v}'`,
        );
      return true;
    }, global);
}

function withPrepareFlags<T>(y: Argv<T>, global = true): Argv<T & PrepareFlags> {
  return withVespaVersion(y, 'Target Vespa version (default: the config server’s current one)', global)
    .option('ignore-validation-errors', {
      type: 'boolean',
      default: false,
      describe: 'Turn validation errors an override could allow into warnings',
      global,
    })
    .option('timeout', { type: 'number', describe: 'Seconds the config server may spend preparing', global })
    .option('dry-run', { type: 'boolean', default: false, describe: 'Validate and report; change nothing', global })
    .option('verbose', { type: 'boolean', default: false, describe: 'Include the detailed prepare log', global });
}

const prepareOptionsOf = (a: PrepareFlags) => ({
  ignoreValidationErrors: a['ignore-validation-errors'],
  vespaVersion: a['vespa-version'],
  timeoutSeconds: a.timeout,
  dryRun: a['dry-run'],
  verbose: a.verbose,
});

function checkWait(wait: number | undefined): void {
  if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0))
    throw new VespaBulkError('VB_USAGE', `--wait must be a number of seconds, not '${wait}'`);
}

type DeployArgs = TargetArgs & PrepareFlags & { path: string; wait?: number };

const deployRun = handler<DeployArgs>(async (argv) => {
  checkWait(argv.wait);
  const target = targetOf(argv);
  const result = await deploy(target, argv.path, {
    ...prepareOptionsOf(argv),
    waitSeconds: argv.wait,
    onStep: argv.json
      ? undefined
      : (step, r) => {
          if (step === 'upload')
            err(`Uploaded ${argv.path} to ${resolveTarget(target).configUrl}: session ${r['session-id']}`);
          if (step === 'prepare') printPrepared(r as PrepareResult);
        },
    onConvergencePoll: argv.json
      ? undefined
      : (c) =>
          err(
            `Waiting for services: generation ${c.currentGeneration} of ${c.wantedGeneration}${c.converged ? ', converged' : ''}`,
          ),
  });
  if (argv.json) return printJson(result);
  const generation = result.activate.application?.generation;
  say(
    `Activated session ${result.activate['session-id']}: application ${appName(target)}${generation !== undefined ? ` generation ${generation}` : ''}`,
  );
  if (result.convergence)
    say(
      `Converged: all ${result.convergence.services.length} services run generation ${result.convergence.wantedGeneration}`,
    );
});

type PrepareArgs = TargetArgs & PrepareFlags & { package: string };

const prepareRun = handler<PrepareArgs>(async (argv) => {
  const target = targetOf(argv);
  let sessionId: string;
  if (/^\d+$/.test(argv.package) && !existsSync(argv.package)) {
    sessionId = argv.package;
  } else {
    const pkg = await readPackage(argv.package);
    const upload = await uploadPackage(target, pkg);
    sessionId = upload['session-id'];
    if (!argv.json) err(`Uploaded ${argv.package}: session ${sessionId}`);
  }
  const prepared = await prepareSession(target, sessionId, prepareOptionsOf(argv));
  if (!argv['dry-run'])
    await rememberSession({ configUrl: resolveTarget(target).configUrl, tenant: target.tenant, sessionId });
  if (argv.json) return printJson(prepared);
  printPrepared(prepared);
  say(
    argv['dry-run']
      ? `Dry run of session ${sessionId}: nothing was changed`
      : `Prepared session ${sessionId}; activate it with: vespa-bulk deploy activate ${sessionId}`,
  );
});

type ActivateArgs = TargetArgs & { 'session-id'?: string; 'ignore-session-stale-failure': boolean; wait?: number };

const activateRun = handler<ActivateArgs>(async (argv) => {
  checkWait(argv.wait);
  const target = targetOf(argv);
  let sessionId = argv['session-id'];
  if (sessionId === undefined) {
    const remembered = await recallSession();
    const url = resolveTarget(target).configUrl;
    if (!remembered)
      throw new VespaBulkError(
        'VB_USAGE',
        `no session id given and none remembered in ${sessionStateFile()}; run 'vespa-bulk deploy prepare <dir>' first`,
      );
    if (remembered.configUrl !== url || remembered.tenant !== target.tenant) {
      throw new VespaBulkError(
        'VB_USAGE',
        `the remembered session ${remembered.sessionId} belongs to ${remembered.configUrl} tenant '${remembered.tenant}', not ${url} tenant '${target.tenant}'; name the session id`,
      );
    }
    sessionId = remembered.sessionId;
  }
  const activated = await activateSession(target, sessionId, {
    ignoreSessionStaleFailure: argv['ignore-session-stale-failure'],
  });
  const convergence =
    argv.wait !== undefined && argv.wait > 0
      ? await waitForConvergence(target, { timeoutMs: argv.wait * 1000, generation: activated.application?.generation })
      : undefined;
  if (argv.json) return printJson(convergence ? { ...activated, convergence } : activated);
  say(
    `${activated.message} Application ${appName(target)}${activated.application?.generation !== undefined ? ` generation ${activated.application.generation}` : ''}`,
  );
  if (convergence)
    say(`Converged: all ${convergence.services.length} services run generation ${convergence.wantedGeneration}`);
});

const prepareCommand = (name: string): CommandModule<any, PrepareArgs> => ({
  command: `${name} <package>`,
  describe: listedCommand('prepare').describe,
  builder: (y) =>
    withPrepareFlags(withTarget(y)).positional('package', {
      type: 'string',
      describe: 'Package directory, .zip, or session id',
    }) as Argv<PrepareArgs>,
  handler: prepareRun,
});

const activateCommand = (name: string): CommandModule<any, ActivateArgs> => ({
  command: `${name} [session-id]`,
  describe: listedCommand('activate').describe,
  builder: (y) =>
    withTarget(y)
      .positional('session-id', { type: 'string' })
      .option('ignore-session-stale-failure', {
        type: 'boolean',
        default: false,
        describe: 'Activate even if another session was activated since this one was prepared',
      })
      .option('wait', { type: 'number', describe: 'Seconds to wait for services to converge' }) as Argv<ActivateArgs>,
  handler: activateRun,
});

const subcommands: AnyCommand[] = [
  prepareCommand('prepare'),
  activateCommand('activate'),
  {
    command: 'status',
    describe: 'Show the deployed application: generation and versions',
    builder: (y) => withTarget(y),
    handler: handler<TargetArgs>(async (argv) => {
      const target = targetOf(argv);
      const status = await getApplication(target);
      if (argv.json) return printJson(status);
      for (const line of formatApplicationStatus(appName(target), status)) out(line);
    }),
  },
  {
    command: 'converge [service]',
    describe: 'Show whether services run the wanted config generation (one service: host:port)',
    builder: (y) =>
      withVespaVersion(
        withTarget(y)
          .positional('service', { type: 'string', describe: 'host:port of one service' })
          .option('wait', { type: 'number', describe: 'Poll until converged, for at most this many seconds' }),
        'Converged only when services run this version',
        true,
      ),
    handler: handler<TargetArgs & { service?: string; wait?: number; 'vespa-version'?: string }>(async (argv) => {
      checkWait(argv.wait);
      const target = targetOf(argv);
      if (argv.service !== undefined) {
        const one =
          argv.wait !== undefined && argv.wait > 0
            ? await waitForServiceConvergence(target, argv.service, {
                timeoutMs: argv.wait * 1000,
                onPoll: argv.json
                  ? undefined
                  : (c) => err(`Waiting for ${c.host}: generation ${c.currentGeneration} of ${c.wantedGeneration}`),
              })
            : await getServiceConvergence(target, argv.service);
        if (argv.json) return printJson(one);
        out(
          `${one.host}: generation ${one.currentGeneration} of ${one.wantedGeneration}, ${one.converged ? 'converged' : 'not converged'}`,
        );
        return;
      }
      const result =
        argv.wait !== undefined && argv.wait > 0
          ? await waitForConvergence(target, {
              timeoutMs: argv.wait * 1000,
              vespaVersion: argv['vespa-version'],
              onPoll: argv.json
                ? undefined
                : (c) => err(`Waiting for services: generation ${c.currentGeneration} of ${c.wantedGeneration}`),
            })
          : await getConvergence(target, { vespaVersion: argv['vespa-version'] });
      if (argv.json) return printJson(result);
      for (const line of formatConvergence(result)) out(line);
    }),
  },
  {
    command: 'content',
    describe: 'Read the deployed application package (ls, cat)',
    builder: (y) =>
      y
        .command(<AnyCommand>{
          command: 'ls [path]',
          describe: 'List a package directory',
          builder: (yy) =>
            withTarget(yy)
              .positional('path', { type: 'string', default: '' })
              .option('recursive', { alias: 'r', type: 'boolean', default: false }),
          handler: handler<TargetArgs & { path: string; recursive: boolean }>(async (argv) => {
            const urls = await listContent(targetOf(argv), argv.path, { recursive: argv.recursive });
            if (argv.json) return printJson(urls);
            for (const url of urls) out(contentUrlToPath(url));
          }),
        })
        .command(<AnyCommand>{
          command: 'cat <path>',
          describe: 'Print a package file',
          builder: (yy) => withTarget(yy).positional('path', { type: 'string' }),
          handler: handler<TargetArgs & { path: string }>(async (argv) => {
            const file = await readContent(targetOf(argv), argv.path);
            process.stdout.write(file.bytes);
          }),
        })
        .demandCommand(1, 'Name a content command: ls or cat.'),
    handler: () => {},
  },
  {
    command: 'restart',
    describe: 'Restart services (all, or those matching the filters)',
    builder: (y) =>
      withTarget(y)
        .option('hostname', repeatable('Only services on these hosts'))
        .option('cluster-type', repeatable('Only clusters of this type: admin, container, content'))
        .option('cluster-id', repeatable('Only these clusters (ids from services.xml)')),
    handler: handler<TargetArgs & { hostname?: string[]; 'cluster-type'?: string[]; 'cluster-id'?: string[] }>(
      async (argv) => {
        const result = await restartServices(targetOf(argv), {
          hostname: argv.hostname,
          clusterType: argv['cluster-type'],
          clusterId: argv['cluster-id'],
        });
        if (argv.json) return printJson(result);
        say(`Restart: ${result.message}`);
      },
    ),
  },
  {
    command: 'reindex',
    describe: 'Trigger reindexing of document types',
    builder: (y) =>
      withTarget(y)
        .option('cluster', repeatable('Content cluster id(s); required with --document-type'))
        .option('document-type', repeatable('Document type(s) to reindex'))
        .option('indexed-only', { type: 'boolean', default: false, describe: 'Only document types in indexed mode' })
        .option('speed', { type: 'number', describe: 'Speed multiplier, 0.0 to 100.0' })
        .option('cause', { type: 'string', describe: 'Why, for the logs' }),
    handler: handler<
      TargetArgs & {
        cluster?: string[];
        'document-type'?: string[];
        'indexed-only': boolean;
        speed?: number;
        cause?: string;
      }
    >(async (argv) => {
      if (argv.speed !== undefined && Number.isNaN(argv.speed))
        throw new VespaBulkError('VB_USAGE', '--speed must be a number from 0.0 to 100.0');
      const result = await triggerReindex(targetOf(argv), {
        clusterId: argv.cluster,
        documentType: argv['document-type'],
        indexedOnly: argv['indexed-only'],
        speed: argv.speed,
        cause: argv.cause,
      });
      if (argv.json) return printJson(result);
      say(result.message);
    }),
  },
  {
    command: 'reindexing',
    describe: 'Show reindexing status per cluster and document type',
    builder: (y) => withTarget(y),
    handler: handler<TargetArgs>(async (argv) => {
      const status = await getReindexing(targetOf(argv));
      if (argv.json) return printJson(status);
      for (const line of formatReindexing(status)) out(line);
    }),
  },
  {
    command: 'delete',
    aliases: ['delete-app'],
    describe: 'Delete the deployed application',
    builder: (y) => withTarget(y),
    handler: handler<TargetArgs>(async (argv) => {
      const result = await deleteApplication(targetOf(argv));
      if (argv.json) return printJson(result);
      say(result.message);
    }),
  },
];

export const commands: AnyCommand[] = [
  {
    ...listedCommand('deploy'),
    // global: false keeps deploy's own flags out of its subcommands (yargs inherits options by default).
    builder: (y) =>
      withPrepareFlags(withTarget(y), false)
        .positional('path', {
          type: 'string',
          default: '.',
          describe: 'Application package directory or .zip',
          global: false,
        } as PositionalOptions)
        .option('wait', {
          type: 'number',
          describe: 'Seconds to wait for services to converge on the new generation',
          global: false,
        })
        .command(subcommands),
    handler: deployRun,
  },
  prepareCommand('prepare'),
  activateCommand('activate'),
];
