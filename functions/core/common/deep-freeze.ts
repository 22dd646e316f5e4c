/**
 * Freezes `value` and everything it holds, for values that callers share (cached rows, immutable
 * versions, a run's modules): a caller that changed one would change it for every other, and
 * frozen, the change throws where it is made instead. Stops at what is frozen already.
 */
export function deepFreeze<V>(value: V): V {
  // Typed arrays with elements cannot be frozen (and nothing shared here holds one).
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
