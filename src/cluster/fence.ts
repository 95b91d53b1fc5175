/** Where a fenced write checks that its lease is still held: the lease key must hold exactly `value`. */
export interface Fence {
  key: string;
  value: string;
}
