import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * `prepare` and `activate` run as separate commands, so the id of the last prepared session is kept in a
 * small file: `$VESPA_BULK_STATE_DIR/deploy-session` when that is set, else `.vespa-bulk/deploy-session`
 * in the working directory (beside the application, like the official CLI's per-project state).
 */
export interface RememberedSession {
  configUrl: string;
  tenant: string;
  sessionId: string;
  preparedAt: string;
}

/** Where `rememberSession` keeps the session: under the user's home, per user not per project. */
export function sessionStateFile(cwd = process.cwd()): string {
  const dir = process.env.VESPA_BULK_STATE_DIR;
  return dir ? join(dir, 'deploy-session') : join(cwd, '.vespa-bulk', 'deploy-session');
}

/** Stores the prepared session id so a later `activate` without an id finds it (as the CLI does). */
export async function rememberSession(
  session: Omit<RememberedSession, 'preparedAt'>,
  file = sessionStateFile(),
): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify({ ...session, preparedAt: new Date().toISOString() })}\n`);
}

/** The remembered session, or undefined when none was remembered (or the file is unreadable). */
export async function recallSession(file = sessionStateFile()): Promise<RememberedSession | undefined> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Partial<RememberedSession>;
    if (typeof value.sessionId !== 'string' || typeof value.configUrl !== 'string' || typeof value.tenant !== 'string')
      return undefined;
    return value as RememberedSession;
  } catch {
    return undefined;
  }
}
