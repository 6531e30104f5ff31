// What a host needs beyond the protocol module: the client, and the package
// and environment rules a host applies before each call.
export * from './client.js';
export { pluginEnvironment } from './environment.js';
export {
  checkExecutable,
  modeProblem,
  PackageFileError,
  readManifestBytes,
  SAFE_OPEN_FLAGS,
  type ExecutableCheck,
} from './package-files.js';
export {
  fileKind,
  hostUid,
  isInPackage,
  ownerProblem,
  pathProblem,
  resolveDirectory,
  writableDirectoryProblem,
} from './path-safety.js';
export { executablePathErrors } from './manifest.js';
export { fingerprintOf } from './fingerprint.js';
export { LineSplitter, decodeUtf8, type LineEvent } from './lines.js';
