import { isVespaBulkError } from '../core/errors.js';
import { isLoopback } from '../http/endpoint.js';
import { localConfigUrl } from './target/resolve.js';
import { modelFromConfigServer, modelFromPackage } from '../deploy/load-model.js';
import type { DocumentModel } from '../schema/document-model.js';

/** How long the guess at a local config server may take before the selection goes unchecked. */
const localGuessMs = 3000;

/**
 * The document model a selection is checked against (`VisitSelectionOptions.model`): the package of `--app`, the
 * application on `--config-url`, or, with neither and a document API on this machine, the application on the
 * config server beside it (port 19071, as a local Vespa and `serve` have it). A given source that cannot be read is
 * an error; the guess is only a guess (`guessed`: used to check the selection, not to type an export's columns), and
 * a selection goes unchecked when nothing answers there.
 */
export async function selectionModel(given: {
  selection: string | undefined;
  app?: string | undefined;
  configUrl?: string | undefined;
  endpoint: string;
}): Promise<{ model: DocumentModel; guessed: boolean } | undefined> {
  if (given.app !== undefined) return { model: await modelFromPackage(given.app), guessed: false };
  if (given.configUrl !== undefined)
    return { model: await modelFromConfigServer({ configUrl: given.configUrl }), guessed: false };
  if (given.selection === undefined || given.selection.trim() === '') return undefined;
  const local = localConfigUrlBeside(given.endpoint);
  if (local === undefined) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const model = await Promise.race([
      modelFromConfigServer({ configUrl: local }),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), localGuessMs);
        timer.unref();
      }),
    ]);
    return model === undefined ? undefined : { model, guessed: true };
  } catch (err) {
    if (isVespaBulkError(err)) return undefined;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The config server's URL on the endpoint's machine, when that machine is this one (a loopback address). */
function localConfigUrlBeside(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return undefined;
  }
  if (!isLoopback(url.origin)) return undefined;
  return `http://${url.hostname}:${new URL(localConfigUrl).port}`;
}
