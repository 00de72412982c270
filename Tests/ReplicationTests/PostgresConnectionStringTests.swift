import Testing

@testable import Replication

/// `replication.postgres_url` read as libpq reads it.
///
/// One host or several, URL or key/value, and its mistakes named.
@Suite struct PostgresConnectionStringTests {
    typealias Host = PostgresConnectionString.Host

    func parse(_ text: String) throws -> PostgresConnectionString {
        try PostgresConnectionString(parsing: text)
    }

    func error(_ text: String) -> String {
        do {
            let parsed = try PostgresConnectionString(parsing: text)
            return "parsed: \(parsed)"
        } catch {
            return error.description
        }
    }

    @Test func aOneHostURLKeepsItsParts() throws {
        let parsed = try parse(
            "postgresql://workoutd:p%40ss@db.example:6543/gym?sslmode=verify-full&sslrootcert=/ca.pem"
        )
        #expect(parsed.hosts == [Host("db.example", 6543)])
        #expect(parsed.user == "workoutd" && parsed.password == "p@ss" && parsed.database == "gym")
        #expect(parsed.options == ["sslmode": "verify-full", "sslrootcert": "/ca.pem"])
        #expect(try parse("postgres://workoutd@db.example").hosts == [Host("db.example", 5432)])
    }

    @Test func aMultiHostURLHasAPortPerHostAndTheDefaultForTheOthers() throws {
        let parsed = try parse(
            "postgresql://workoutd@db1.example:5433,db2.example,[2001:db8::7]:6000/gym?target_session_attrs=read-write"
        )
        #expect(
            parsed.hosts == [Host("db1.example", 5433), Host("db2.example", 5432), Host("2001:db8::7", 6000)]
        )
        #expect(parsed.hosts.map(\.description) == ["db1.example:5433", "db2.example:5432", "[2001:db8::7]:6000"])
        #expect(parsed.options["target_session_attrs"] == "read-write")
        #expect(parsed.database == "gym")
    }

    @Test func queryItemsNameHostsPortsAndSocketsOverTheAuthority() throws {
        #expect(try parse("postgresql://workoutd@/gym?host=/run/postgresql").hosts == [Host("/run/postgresql")])
        #expect(
            try parse("postgresql://workoutd@ignored/gym?host=a,b&port=7000").hosts == [
                Host("a", 7000), Host("b", 7000),
            ]
        )
        #expect(try parse("postgresql://workoutd@%2Frun%2Fpg:5433/gym").hosts == [Host("/run/pg", 5433)])
        #expect(try parse("postgresql://workoutd@h/gym?dbname=other&user=someone").database == "other")
    }

    @Test func theKeyValueFormQuotesAndEscapesAsLibpqDoes() throws {
        let parsed = try parse(
            #"host=db1,db2 port=5432,5433 dbname='gym floor' user = workoutd password='it\'s \\ secret' sslmode=require"#
        )
        #expect(parsed.hosts == [Host("db1", 5432), Host("db2", 5433)])
        #expect(parsed.database == "gym floor" && parsed.user == "workoutd")
        #expect(parsed.password == #"it's \ secret"#)
        #expect(parsed.options == ["sslmode": "require"])
        #expect(try parse("host=db1,db2 port=6000 user=u").hosts == [Host("db1", 6000), Host("db2", 6000)])
        #expect(try parse(#"host=a\ b user=u"#).hosts == [Host("a b")])
        #expect(try parse("host=db user=u port=").hosts == [Host("db", 5432)])
    }

    @Test func mistakesAreNamed() {
        #expect(error("db.example/gym").contains("must be a postgresql:// URL or libpq key=value settings"))
        #expect(error("postgresql://workoutd@/gym").contains("names no host"))
        #expect(error("postgresql://workoutd@a,,b/gym").contains("empty entry in its host list"))
        #expect(error("postgresql://workoutd@a:1,b:2,c:3/gym?port=1,2").contains("lists 2 ports for 3 hosts"))
        #expect(error("postgresql://workoutd@a:99999/gym").contains("invalid port '99999'"))
        #expect(error("postgresql://workoutd@a:x/gym").contains("invalid port 'x'"))
        #expect(error("postgresql://workoutd@[::1/gym").contains("without its closing ']'"))
        #expect(error("postgresql://workoutd@a/gym?sslmode").contains("query item without a value"))
        #expect(error("host=a user").contains("no '=' after keyword 'user'"))
        #expect(error("host=a =x").contains("'=' without a keyword"))
        #expect(error("host=a password='open").contains("unterminated quoted value for 'password'"))
        #expect(error("host=a hostaddr=10.0.0.1").contains("unknown keyword 'hostaddr'"))
    }
}

/// What `replication.postgres_url` with several hosts means for the shipper.
@Suite struct MultiHostReplicationConfigurationTests {
    func configuration(_ url: String) throws -> ReplicationConfiguration {
        try ReplicationConfiguration(url: url, passwordFile: nil, hubID: "hall")
    }

    func error(_ url: String) -> String {
        do {
            _ = try configuration(url)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test func severalHostsWantAWritableOneUnlessAnyIsAsked() throws {
        let two = try configuration("postgresql://workoutd@db1:5432,db2:5433/gym?sslmode=require")
        #expect(two.endpoints == [.tcp(host: "db1", port: 5432), .tcp(host: "db2", port: 5433)])
        #expect(two.targetSessionAttributes == .readWrite)
        #expect(two.redactedDescription == "postgresql://workoutd@db1:5432,db2:5433/gym?sslmode=require")
        let any = try configuration("host=db1,db2 user=workoutd dbname=gym sslmode=require target_session_attrs=any")
        #expect(any.targetSessionAttributes == .any)
        #expect(any.redactedDescription.hasSuffix("sslmode=require&target_session_attrs=any"))
        let one = try configuration("postgresql://workoutd:pw@db1/gym?sslmode=disable")
        #expect(one.targetSessionAttributes == .any)
        #expect(one.redactedDescription == "postgresql://workoutd:***@db1:5432/gym?sslmode=disable")
        let checked = try configuration("postgresql://workoutd@db1/gym?sslmode=disable&target_session_attrs=read-write")
        #expect(checked.targetSessionAttributes == .readWrite)
    }

    @Test func otherSessionAttributesAreRefused() {
        for value in ["read-only", "standby", "primary", "prefer-standby", "readwrite"] {
            #expect(
                error("postgresql://workoutd@db1,db2/gym?target_session_attrs=\(value)")
                    .contains("target_session_attrs must be read-write or any; got '\(value)'"),
                "\(value)"
            )
        }
    }

    @Test func socketsAreLocalAndEachTCPHostIsVerifiedByItsOwnName() throws {
        let sockets = try configuration("host=/run/a,/run/b port=5432,5433 user=workoutd dbname=gym")
        #expect(
            sockets.endpoints == [.unixSocket(path: "/run/a/.s.PGSQL.5432"), .unixSocket(path: "/run/b/.s.PGSQL.5433")]
        )
        #expect(sockets.serverIdentity == .local && sockets.sslMode == .disable)
        let tcp = try configuration("postgresql://workoutd@db1,db2/gym")
        #expect(tcp.sslMode == .verifyFull && tcp.serverIdentity == .verified)
        #expect(error("postgresql://workoutd@db1/gym?sslmode=prefer").contains("refused as unsafe"))
        #expect(error("host=db1 dbname=gym").contains("names no user"))
    }
}
