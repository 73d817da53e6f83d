/*
 * MongoDB-wire test server for the Mongo task-store suite (test/support/mongo-server.ts).
 *
 *   java -cp "$(cat cp.txt)" MongoWireServer.java <port>
 *
 * Java 17 single-file source mode; cp.txt comes from
 *   mvn -q -f .ci/mongo-java-server/pom.xml dependency:build-classpath -Dmdep.outputFile=cp.txt
 *
 * Binds mongo-java-server's in-memory backend to 127.0.0.1:<port> (0 = any free port), prints
 * "LISTENING <port>" on stdout once it accepts connections, and exits when stdin closes, so a test run
 * that is killed leaves no server behind. Gaps versus real MongoDB: no transactions, TTL and
 * non-unique secondary indexes are ignored, only the legacy `ismaster` handshake (do not set serverApi).
 */
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.io.InputStream;
import java.net.InetSocketAddress;

public class MongoWireServer {
    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", port);
        InetSocketAddress address = server.getLocalAddress();
        System.out.println("LISTENING " + address.getPort());
        System.out.flush();

        // Block until the parent closes our stdin (or dies), then shut down.
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // Input is ignored; only end-of-stream matters.
            }
        } catch (Exception ignored) {
            // A broken pipe means the parent is gone: shut down as well.
        }
        server.shutdownNow();
        System.exit(0);
    }
}
