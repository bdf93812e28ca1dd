// A worker for test/threads/channel.test.ts: answers each `ping` with its start value and the number, fails on `fail`.
import { VespaBulkError } from '../../src/core/errors.js';
import { ParentChannel } from '../../src/threads/channel.js';
import { toWireError } from '../../src/threads/errors.js';
import type { EchoProtocol } from './channel.test.js';

const port = ParentChannel.open<EchoProtocol>();
port.onMessage((m) => {
  switch (m.type) {
    case 'ping':
      port.post({ type: 'pong', label: port.start.label, n: m.n });
      return;
    case 'fail':
      port.post({
        type: 'error',
        error: toWireError(new VespaBulkError('VB_TIMEOUT', 'too slow', { place: { file: 'in.jsonl', line: 3 } })),
      });
      return;
    case 'end':
      port.close();
  }
});
