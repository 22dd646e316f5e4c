import { createHash, createHmac, randomBytes, randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';
import { v7 as uuidV7 } from 'uuid';

/** Hashing and random ids. node:crypto is synchronous and available on Node and Lambda alike. */

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function hmacSha256Hex(key: Uint8Array, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

/** Whether a signature a client sent is the expected one, compared in constant time. */
export function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function newUuid(): string {
  return randomUUID();
}

/** The last id's time and sequence: ids made within one millisecond count up from its first. */
const idClock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };
const idPool = { bytes: new Uint8Array(4096), next: 4096 };

/**
 * A new job's id: a UUID of version 7, its first 48 bits the time in milliseconds and increasing
 * within this process, the rest random (74 bits). Job ids key the jobs table and the index of their
 * arguments: ids in the order of their creation append to the same few pages, where random ones
 * wrote a page of each index per job. Windmill's job ids are time-ordered too (ULIDs).
 */
export function newJobId(): string {
  const random = idRandomBytes();
  const now = Date.now();
  if (now > idClock.msecs) {
    idClock.msecs = now;
    // A new millisecond starts from a random sequence (31 bits), as uuid's own v7 does.
    idClock.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    idClock.seq = (idClock.seq + 1) | 0;
    if (idClock.seq === 0) idClock.msecs++;
  }
  return uuidV7({ msecs: idClock.msecs, seq: idClock.seq, random });
}

/**
 * 16 random bytes for an id, from a pool filled 4 KiB at a time: uuid's v7 asks WebCrypto for 16
 * bytes per id, which cost ~4% of the service's CPU per sync run (two ids each) in a CPU profile.
 */
function idRandomBytes(): Uint8Array {
  if (idPool.next === idPool.bytes.length) {
    randomFillSync(idPool.bytes);
    idPool.next = 0;
  }
  const start = idPool.next;
  idPool.next += 16;
  return idPool.bytes.subarray(start, idPool.next);
}

/**
 * The same UUID each time for the same `parts` (a UUID's layout, version 8: made here from their
 * SHA-256): the id of a run that must start at most once, known before it starts.
 */
export function derivedUuid(...parts: string[]): string {
  const hex = sha256Hex(parts.join('\0'));
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A URL-safe random secret (256 bits). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A short random id from letters and digits (not a secret: ids that may be shown and stored). */
export function newShortId(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(length), (b) => alphabet[b % alphabet.length]).join('');
}
