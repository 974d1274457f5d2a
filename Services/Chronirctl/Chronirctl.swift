import ArgumentParser
import BuildInfo

/// The operator's command-line tool.
@main
struct Chronirctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chronirctl",
        abstract: "Operate the Chronir backend: health, schedules, traces, load.",
        version: BuildInfo.version,
        subcommands: [HealthCommand.self, KeysCommand.self, ScheduleCommand.self, TierCommand.self, SchedulerCommand.self, NotificationsCommand.self, TraceCommand.self, UserCommand.self, ConsumerCommand.self, DeadLettersCommand.self, AnalyticsCommand.self, LoadCommand.self]
    )
}
