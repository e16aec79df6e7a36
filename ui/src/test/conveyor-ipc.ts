// The conveyor half of `lib/ipc.ts` mocked for vitest: every function of the real `conveyor`
// object becomes a `vi.fn()`, so the mock follows ipc.ts as it grows. Use from a test file:
//
//   vi.mock('../ipc', async (orig) => (await import('../../test/conveyor-ipc')).mockIpc(await orig()));
//   const api = conveyorMock(await import('../ipc'));
import { vi, type Mock } from 'vitest';

type Ipc = typeof import('../lib/ipc');
export type ConveyorMock = Record<keyof Ipc['conveyor'], Mock>;

/** The module factory: the real `IpcError`, a mocked `conveyor`. */
export function mockIpc(real: Ipc) {
  const conveyor = Object.fromEntries(Object.keys(real.conveyor).map((k) => [k, vi.fn()]));
  return { IpcError: real.IpcError, conveyor };
}

/** The mocked `conveyor` of the (mocked) ipc module, typed for `mockResolvedValue` and co. */
export function conveyorMock(ipc: Ipc): ConveyorMock {
  return ipc.conveyor as unknown as ConveyorMock;
}
