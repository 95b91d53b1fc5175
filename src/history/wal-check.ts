import { existsSync, readFileSync } from 'node:fs';
import { endianness } from 'node:os';

/**
 * Damage in a SQLite write-ahead log (contract 12a), which `PRAGMA quick_check` cannot see: a running connection
 * reads the WAL through its index (`-shm`) and never checks a frame's checksum, while the next opening replays the
 * WAL only up to the first frame whose checksum fails and silently drops the rest — transactions the daemon wrote
 * and read back, lost at the next start (what Prometheus's TSDB repairs at its start, where it keeps everything
 * before the first damaged record, and says so).
 *
 * The frames are checked as SQLite's recovery would: the header's checksum, then each frame's salts and cumulative
 * checksum (https://www.sqlite.org/fileformat2.html#walformat). What the database holds is the index's `mxFrame`
 * when the `-shm` file is there (a running connection, or one killed), else every frame of the current salts; frames
 * a checkpoint already copied into the file (the index's `nBackfill`) are not lost with the log.
 * Returns what would be lost, or undefined when the log is whole (or absent).
 */
export function walDamage(dbFile: string): string | undefined {
  const walFile = `${dbFile}-wal`;
  if (!existsSync(walFile)) return undefined;
  const wal = readFileSync(walFile);
  if (wal.length < WAL_HEADER) return undefined;
  const index = indexedFrames(`${dbFile}-shm`);
  const indexed = index?.held;
  // Frames a checkpoint copied into the file are there whatever becomes of the log: their damage loses nothing.
  const backfilled = index?.backfilled ?? 0;
  const magic = wal.readUInt32BE(0);
  const pageSize = wal.readUInt32BE(8);
  const frameSize = FRAME_HEADER + pageSize;
  const framesInFile = pageSize >= 512 ? Math.floor((wal.length - WAL_HEADER) / frameSize) : 0;
  const headerOk = (magic === 0x377f0682 || magic === 0x377f0683) && framesInFile >= 0 && sameChecksum(checksum(wal, 0, 24, [0, 0], magic === 0x377f0683), wal, 24);
  if (!headerOk) {
    // A log whose header is unreadable is replayed as empty.
    return indexed !== undefined && indexed > backfilled ? `the write-ahead log's header is damaged: the ${indexed - backfilled} frame(s) the database holds only in it would be lost at the next start` : undefined;
  }
  const bigEndian = magic === 0x377f0683;
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let sum: [number, number] = [wal.readUInt32BE(24), wal.readUInt32BE(28)];
  let valid = 0;
  let committed = 0;
  for (let i = 0; i < framesInFile; i++) {
    const at = WAL_HEADER + i * frameSize;
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    sum = checksum(wal, at, 8, sum, bigEndian);
    sum = checksum(wal, at + FRAME_HEADER, pageSize, sum, bigEndian);
    if (!sameChecksum(sum, wal, at + 16)) break;
    valid = i + 1;
    if (wal.readUInt32BE(at + 4) !== 0) committed = valid;
  }
  // Without an index: frames of this log's salts after the first damaged one were written, and would be dropped.
  let held = indexed;
  if (held === undefined) {
    held = committed;
    for (let i = valid; i < framesInFile; i++) {
      const at = WAL_HEADER + i * frameSize;
      if (wal.readUInt32BE(at + 8) === salt1 && wal.readUInt32BE(at + 12) === salt2) held = i + 1;
    }
  }
  if (held <= Math.max(committed, backfilled)) return undefined;
  const from = Math.max(committed, backfilled);
  return `the write-ahead log is damaged at frame ${committed + 1} of ${held}: the ${held - from} frame(s) from there not yet in the file would be lost at the next start`;
}

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/**
 * The wal-index's `mxFrame` (the last valid frame, as the writer left it) and `nBackfill` (the frames a checkpoint
 * has already copied into the database file), or undefined without an index.
 */
function indexedFrames(shmFile: string): { held: number; backfilled: number } | undefined {
  if (!existsSync(shmFile)) return undefined;
  const shm = readFileSync(shmFile);
  if (shm.length < 100) return undefined;
  // Native byte order, as SQLite writes its shared memory: two copies of the 48-byte header, then the checkpoint
  // information whose first field is nBackfill.
  const read = (at: number): number => (endianness() === 'LE' ? shm.readUInt32LE(at) : shm.readUInt32BE(at));
  const isInit = shm[12];
  if (isInit !== 1) return undefined;
  const held = read(16);
  return { held, backfilled: Math.min(read(96), held) };
}

/** SQLite's WAL checksum over `length` bytes (a multiple of 8) from `at`, continuing from `[s0, s1]`. */
function checksum(buf: Buffer, at: number, length: number, [s0, s1]: [number, number], bigEndian: boolean): [number, number] {
  let a = s0;
  let b = s1;
  for (let i = at; i < at + length; i += 8) {
    const x0 = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const x1 = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    a = (a + x0 + b) >>> 0;
    b = (b + x1 + a) >>> 0;
  }
  return [a, b];
}

function sameChecksum(sum: [number, number], buf: Buffer, at: number): boolean {
  return sum[0] === buf.readUInt32BE(at) && sum[1] === buf.readUInt32BE(at + 4);
}
