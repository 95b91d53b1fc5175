import { TransferWatchError } from '../util/errors.js';

/** Codes: SIM_BAD_REQUEST (answered 400), SIM_BAD_RECORD (an injected record is invalid), SIM_START (cannot listen). */
export class SimulatorError extends TransferWatchError {
  constructor(code: 'SIM_BAD_REQUEST' | 'SIM_BAD_RECORD' | 'SIM_START', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'SimulatorError';
  }
}
