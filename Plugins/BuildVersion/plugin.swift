import Foundation
import PackagePlugin

/// Writes `BuildVersion.swift` (`BuildInfo.version`) before every build: `CHRONIR_BUILD_VERSION`
/// when set (image builds, where `.git` is not in the context), else `git describe --tags
/// --always --dirty` of the package, else `unknown`. The file is rewritten only when the version
/// changed, so an unchanged tree compiles nothing again.
@main
struct BuildVersion: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let out = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = context.package.directoryURL.appending(path: "scripts/build-version.sh")
        return [.prebuildCommand(displayName: "Stamping the build version",
                                 executable: URL(filePath: "/bin/sh"),
                                 arguments: [script.path(), context.package.directoryURL.path(), out.path()],
                                 outputFilesDirectory: out)]
    }
}
