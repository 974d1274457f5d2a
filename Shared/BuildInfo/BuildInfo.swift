/// What was built: `BuildInfo.version` is written at build time by the `BuildVersion` plugin
/// (`git describe --tags --always --dirty`, or `CHRONIR_BUILD_VERSION` in image builds), and
/// shown by `chronirctl --version`, `/livez`, `/readyz`, the operations page and the
/// `chronir_build_info` metric.
public enum BuildInfo {}
