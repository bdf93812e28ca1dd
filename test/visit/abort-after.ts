import type { VisitRun } from '../../src/visit/visitor.js';

/** An `onStart` for exportDocuments that aborts the export once it has written `documents` documents: a stop half way. */
export function abortAfter(controller: AbortController, documents: number): (run: VisitRun) => void {
  return (run) => {
    const timer = setInterval(() => {
      if (run.documents() >= documents) {
        controller.abort();
        clearInterval(timer);
      }
    }, 1);
    void run.done.finally(() => clearInterval(timer));
  };
}
