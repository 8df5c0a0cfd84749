/** Placeholder for a feature still being written. Removed once every module is in. */
export function todo(name: string): never {
  throw new Error(`${name} is not implemented yet`);
}
