/*
 * Part of datae's BSBM benchmark (bench/bsbm/README.md); not from bsbmtools.
 *
 * Writes the query mixes the BSBM test driver would send, with their parameters drawn by
 * the driver's own parameter pool (LocalSPARQLParameterPool over the generator's test
 * driver data, seeded like the driver's -seed), so that engines the driver cannot reach
 * (in-process ones) run exactly the same query texts as the servers. It draws parameters
 * in the driver's order (TestDriver.run: warm-up mixes first, then the timed ones, each
 * query of a mix in the order of querymix.txt), so mix i here is the driver's run i.
 *
 * Usage: DumpQueryMixes TD_DIR QUERY_DIR MIXES SEED
 * Output, one JSON object a line on stdout (UTF-8):
 *   {"mix": 0, "pos": 0, "query": 1, "form": "select", "text": "PREFIX ..."}
 */
package benchmark.testdriver;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.File;
import java.io.FileReader;
import java.io.IOException;
import java.io.PrintStream;

public class DumpQueryMixes {
  public static void main(String[] args) throws IOException {
    if (args.length != 4) {
      System.err.println("usage: DumpQueryMixes TD_DIR QUERY_DIR MIXES SEED");
      System.exit(2);
    }
    File queryDir = new File(args[1]);
    int mixes = Integer.parseInt(args[2]);
    LocalSPARQLParameterPool pool = new LocalSPARQLParameterPool(new File(args[0]), Long.parseLong(args[3]));
    int[] order = queryOrder(new File(queryDir, "querymix.txt"));
    Query[] queries = new Query[order.length];
    for (int pos = 0; pos < order.length; pos++) {
      int nr = order[pos];
      queries[pos] = new Query(new File(queryDir, "query" + nr + ".txt"), new File(queryDir, "query" + nr + "desc.txt"), "%");
    }
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
    for (int mix = 0; mix < mixes; mix++) {
      for (int pos = 0; pos < order.length; pos++) {
        Query query = queries[pos];
        query.setParameters(pool.getParametersForQuery(query));
        out.println("{\"mix\": " + mix + ", \"pos\": " + pos + ", \"query\": " + order[pos] + ", \"form\": \""
            + form(query.getQueryType()) + "\", \"text\": \"" + json(query.getQueryString()) + "\"}");
      }
    }
    out.flush();
  }

  /** The query numbers of one mix, in order (the first line of querymix.txt). */
  static int[] queryOrder(File mixFile) throws IOException {
    try (BufferedReader reader = new BufferedReader(new FileReader(mixFile))) {
      String[] numbers = reader.readLine().trim().split("\\s+");
      int[] order = new int[numbers.length];
      for (int i = 0; i < numbers.length; i++) {
        order[i] = Integer.parseInt(numbers[i]);
      }
      return order;
    }
  }

  /** The name of a Query.*_TYPE constant. */
  static String form(byte type) {
    switch (type) {
      case Query.SELECT_TYPE: return "select";
      case Query.DESCRIBE_TYPE: return "describe";
      case Query.CONSTRUCT_TYPE: return "construct";
      default: return "update";
    }
  }

  /** {@code text} as the inside of a JSON string. */
  static String json(String text) {
    StringBuilder out = new StringBuilder(text.length() + 16);
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
