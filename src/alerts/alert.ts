/**
 * The alert as the rest of the pipeline sees it (alert store → notify, http, metrics).
 * Identity is the full label set; `fingerprint` is its stable hash.
 */
export type Labels = Record<string, string>;

export type AlertState = 'pending' | 'firing' | 'resolved';

/** A failed transfer shown in a notification (error_burst shows up to 5). */
export interface TransferSample {
  time: number;
  file: string;
  code: number;
  message: string;
  user: string;
  instance: string;
}

export interface Alert {
  fingerprint: string;
  labels: Labels;
  annotations: Record<string, string>;
  state: AlertState;
  /** When it became active (pending or firing), epoch ms. Survives restarts. */
  activeAt: number;
  /** When it moved to firing, if it did. */
  firedAt?: number;
  /** When it resolved, if it did. */
  resolvedAt?: number;
  /** Rule-specific values for messages (e.g. `count`, `window_ms`, `arrived_at`). */
  values: Record<string, number | string>;
  /** Sample transfers behind the alert (error_burst: the most recent failures, at most 5). */
  samples: TransferSample[];
  /**
   * Its condition cleared, and `keep_firing_for` holds it firing until then (epoch ms); `clearedAt` is the last
   * evaluation it was active at. Absent while the condition holds. Not persisted: recomputed at each evaluation.
   */
  held?: { until: number; clearedAt: number; keepFiringFor: number };
  /**
   * Who acknowledged it (contract 14): set by the notifier on what it hands on (messages, `/api/v1/alerts`) from the
   * acknowledgements it holds; a resolved alert keeps the ack it had when it resolved. Never stored with the alert.
   */
  ack?: AlertAck;
}

/** An acknowledgement as an alert carries it. */
export interface AlertAck {
  id: string;
  by: string;
  /** Epoch ms. */
  at: number;
  comment: string;
}
