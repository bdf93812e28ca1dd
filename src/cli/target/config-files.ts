import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { VespaBulkError } from '../../core/errors.js';
import { parseConfigYaml, type ConfigLayer } from './resolve.js';

/** The I/O half of target resolution: finding and reading the official CLI's config files. */

/** `$VESPA_CLI_HOME`, else `~/.vespa`. */
export function vespaCliHome(env: Readonly<Record<string, string | undefined>>, userHome = homedir()): string {
  const set = env.VESPA_CLI_HOME;
  return set !== undefined && set !== '' ? resolve(set) : join(userHome, '.vespa');
}

/**
 * The nearest `.vespa/config.yaml` from `cwd` upwards (not in or above the home directory, so an unrelated
 * `~/.vespa` is never taken for a project's), then `<home>/config.yaml`. Missing files are no layer.
 */
export function readConfigLayers(cwd: string, home: string, userHome = homedir()): ConfigLayer[] {
  const layers: ConfigLayer[] = [];
  const local = nearestLocalConfig(resolve(cwd), resolve(userHome));
  if (local !== undefined && resolve(local) !== resolve(join(home, 'config.yaml'))) {
    const layer = readLayer(local);
    if (layer) layers.push(layer);
  }
  const global = readLayer(join(home, 'config.yaml'));
  if (global) layers.push(global);
  return layers;
}

function nearestLocalConfig(start: string, userHome: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (dir === userHome) return undefined;
    const candidate = join(dir, '.vespa');
    if (isDirectory(candidate)) return join(candidate, 'config.yaml');
    if (dirname(dir) === dir) return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readLayer(file: string): ConfigLayer | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new VespaBulkError(
      'VB_USAGE',
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
  return parseConfigYaml(text, file);
}
