import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every `.ts` file under `dir`, its path joined to `dir`, sorted. */
export function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? tsFilesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    )
    .sort();
}
