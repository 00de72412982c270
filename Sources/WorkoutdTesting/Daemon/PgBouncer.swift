import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Debian's PgBouncer in front of a test's ``PostgresCluster``, in transaction pooling mode.
///
/// It listens on 127.0.0.1 at a free port (and on a unix socket in its own temporary directory, for the admin console)
/// and serves database `gym`: role `workoutd` authenticates with SCRAM (``PostgresCluster/password``), and PgBouncer
/// logs in to the cluster over TCP with the same password. At most ``poolSize`` server connections for all of its
/// clients. Like the cluster, it runs as `nobody` when the test runs as root.
public final class PgBouncer: @unchecked Sendable {
    public static let executable = "/usr/sbin/pgbouncer"
    public let directory: String
    public let port: Int
    /// `default_pool_size`: the most server connections for database `gym` and role `workoutd`.
    public let poolSize: Int
    private let cluster: PostgresCluster

    public init(in front: PostgresCluster, poolSize: Int = 5, maximumClients: Int = 500) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw TestingError(
                "PgBouncer is not installed (make deps, or apt-get install pgbouncer): no \(Self.executable)"
            )
        }
        cluster = front
        self.poolSize = poolSize
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("wd-pgb-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0, let account = getpwnam("nobody") {
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        port = try PostgresCluster.freePort()
        try """
        [databases]
        gym = host=127.0.0.1 port=\(front.port) dbname=gym

        [pgbouncer]
        listen_addr = 127.0.0.1
        listen_port = \(port)
        unix_socket_dir = \(directory)
        auth_type = hba
        auth_hba_file = \(directory)/hba.conf
        auth_file = \(directory)/userlist.txt
        admin_users = postgres
        pool_mode = transaction
        default_pool_size = \(poolSize)
        max_client_conn = \(maximumClients)
        logfile = \(directory)/pgbouncer.log
        pidfile = \(directory)/pgbouncer.pid

        """.write(toFile: directory + "/pgbouncer.ini", atomically: true, encoding: .utf8)
        // The console over the private socket without a password; hubs over TCP with SCRAM, as to the server itself.
        try "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n".write(
            toFile: directory + "/hba.conf",
            atomically: true,
            encoding: .utf8
        )
        try "\"workoutd\" \"\(PostgresCluster.password)\"\n\"postgres\" \"\"\n".write(
            toFile: directory + "/userlist.txt",
            atomically: true,
            encoding: .utf8
        )
        // -d: it forks into the background once it listens.
        _ = try front.capture(Self.executable, ["-d", directory + "/pgbouncer.ini"])
    }

    /// The URL a hub uses to reach the cluster through the pooler.
    public func url(user: String = "workoutd") -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/gym?sslmode=disable"
    }

    /// Runs `command` on the admin console and returns its rows, by column name.
    ///
    /// For example `SHOW POOLS` or `SHOW CLIENTS`.
    public func show(_ command: String) throws -> [[String: String]] {
        let text = try cluster.capture(
            cluster.binDirectory + "/psql",
            ["-X", "-q", "-A", "-h", directory, "-p", "\(port)", "-U", "postgres", "-d", "pgbouncer", "-c", command]
        )
        let lines = text.split(separator: "\n").map(String.init)
        guard let header = lines.first?.split(separator: "|", omittingEmptySubsequences: false).map(String.init) else {
            return []
        }
        return lines.dropFirst().filter { !$0.hasPrefix("(") }.map { line in
            let values = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, values))
        }
    }

    /// `SHOW POOLS`' row of database `gym`, role `workoutd`.
    ///
    /// Its counts by column: `cl_active`, `cl_waiting`, `sv_active`, `sv_idle`, ….
    public func pool() throws -> [String: Int] {
        guard let row = try show("SHOW POOLS").first(where: { $0["database"] == "gym" && $0["user"] == "workoutd" })
        else { return [:] }
        return row.compactMapValues { Int($0) }
    }

    public var log: String { (try? String(contentsOfFile: directory + "/pgbouncer.log", encoding: .utf8)) ?? "" }

    deinit {
        if let text = try? String(contentsOfFile: directory + "/pgbouncer.pid", encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0
        {
            kill(pid, SIGTERM)
            // Gone before the cluster it fronts is stopped and its directory removed.
            for _ in 0..<100 where kill(pid, 0) == 0 { usleep(20_000) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
