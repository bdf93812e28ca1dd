/**
 * Exactly-once delivery for one slice across resumptions. Pure.
 *
 * A continuation token covers the documents sent before it. Documents sent after the last token of a
 * response are provisional: when the response is cut, the visit resumes from that token and the service
 * sends them again (possibly in another order, and possibly after later tokens of the new response, since
 * the real service visits buckets concurrently). So the ids delivered after the last token are kept, and
 * after a cut they become "already delivered": each of them is skipped once when it comes again. Memory is
 * bounded by the documents the service sends between two tokens.
 */
export class ExactlyOnce {
  /** Delivered (or skipped as repeats) since the last token of the current response. */
  private sinceToken = new Set<string>();
  /** Delivered before a cut and not yet seen again. */
  private alreadyDelivered = new Set<string>();
  private repeats = 0;

  constructor(deliveredIds: Iterable<string> = []) {
    for (const id of deliveredIds) this.alreadyDelivered.add(id);
  }

  /** Whether the document is new (deliver it) or a repeat after a resumption (skip it). */
  accept(id: string): boolean {
    if (this.alreadyDelivered.size > 0 && this.alreadyDelivered.delete(id)) {
      // Still after the current token: if this response is cut too, it comes a third time.
      this.sinceToken.add(id);
      this.repeats++;
      return false;
    }
    this.sinceToken.add(id);
    return true;
  }

  /** A continuation token arrived: what came before it will not be sent again from here on. */
  tokenAdvanced(): void {
    this.sinceToken.clear();
  }

  /** The response ended early: its provisional documents will be sent again. */
  cut(): void {
    for (const id of this.sinceToken) this.alreadyDelivered.add(id);
    this.sinceToken.clear();
  }

  /** The chain is finished: nothing more will come. */
  finished(): void {
    this.sinceToken.clear();
    this.alreadyDelivered.clear();
  }

  /** Ids delivered after the current token; a checkpoint stores them so a resumed run skips them too. */
  pendingIds(): string[] {
    return [...this.alreadyDelivered, ...this.sinceToken];
  }

  /** Documents skipped because they had been delivered before. */
  get repeatsSkipped(): number {
    return this.repeats;
  }
}
