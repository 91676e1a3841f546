/**
 * The package's version, which is Goblin's own (the module's Cargo.toml): tests/node_package.rs
 * holds this text, package.json's version and Cargo.toml's equal.
 */
export const VERSION = '0.4.0'

/**
 * `MODULE LIST`'s `ver` for a version text: major × 10000 + minor × 100 + patch, as the module
 * derives it from its Cargo.toml version (0.3.0 is 300).
 */
export function moduleVersion(version: string): number {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)
  if (match === null) {
    throw new RangeError(`a version is major.minor.patch, not ${JSON.stringify(version)}`)
  }
  const [major, minor, patch] = match.slice(1).map(Number) as [number, number, number]
  return major * 10000 + minor * 100 + patch
}

/** The oldest Goblin this package works with: its own version's. */
export const MODULE_VERSION = moduleVersion(VERSION)

/** `300` as `0.3.0`. */
export function versionText(version: number): string {
  return `${Math.floor(version / 10000)}.${Math.floor(version / 100) % 100}.${version % 100}`
}
