/*
 * Part of datae's BSBM benchmark (bench/bsbm/README.md); not from SSJ or bsbmtools.
 *
 * The one piece of SSJ (umontreal.iro.lecuyer.probdist) the BSBM data generator uses:
 * the inverse distribution function of a normal law. This class has the name and the
 * two members the generator calls, so its sources compile unchanged without ssj.jar.
 *
 * The inverse of the standard normal is Wichura's algorithm AS 241 (PPND16, "The
 * Percentage Points of the Normal Distribution", Applied Statistics 37(3), 1988,
 * pp. 477-484): rational approximations on three ranges of p, relative error about
 * 1e-16. SSJ's NormalDistQuick is less precise, so where the generator truncates a
 * value that falls on an integer edge it can land one lower or higher: at -pc 28480
 * (10M triples) 54 triples differ from the SSJ build's output; at -pc 100 and 2785 the
 * output is byte-identical.
 */
package umontreal.iro.lecuyer.probdist;

public class NormalDistQuick {
  // Numerator and denominator coefficients, constant term first, of AS 241's three
  // rational approximations: the central range |p - 0.5| <= 0.425, then
  // r = sqrt(-log(min(p, 1 - p))) <= 5, then r > 5. The denominators' constant term is 1.
  private static final double[] CENTRAL_NUM = {
    3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125,
    45921.953931549871457, 67265.770927008700853, 33430.575583588128105, 2509.0809287301226727};
  private static final double[] CENTRAL_DEN = {
    1.0, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077,
    21213.794301586595867, 39307.89580009271061, 28729.085735721942674, 5226.495278852545925};
  private static final double[] NEAR_NUM = {
    1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504,
    1.27045825245236838258, 0.24178072517745061177, 0.0227238449892691845833, 7.7454501427834140764e-4};
  private static final double[] NEAR_DEN = {
    1.0, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455,
    0.14810397642748007459, 0.0151986665636164571966, 5.475938084995344946e-4, 1.05075007164441684324e-9};
  private static final double[] FAR_NUM = {
    6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123,
    0.026532189526576123093, 0.0012426609473880784386, 2.71155556874348757815e-5, 2.01033439929228813265e-7};
  private static final double[] FAR_DEN = {
    1.0, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525,
    7.868691311456132591e-4, 1.8463183175100546818e-5, 1.4215117583164458887e-7, 2.04426310338993978564e-15};

  private final double mu;
  private final double sigma;

  /** The normal law of mean {@code mu} and standard deviation {@code sigma}. */
  public NormalDistQuick(double mu, double sigma) {
    this.mu = mu;
    this.sigma = sigma;
  }

  /** The value x with P(X <= x) = u. */
  public double inverseF(double u) {
    return mu + sigma * inverseF01(u);
  }

  /** The inverse of the standard normal distribution function at p (infinite at 0 and 1). */
  public static double inverseF01(double p) {
    double q = p - 0.5;
    if (Math.abs(q) <= 0.425) {
      double r = 0.180625 - q * q;
      return q * ratio(CENTRAL_NUM, CENTRAL_DEN, r);
    }
    double tail = q < 0 ? p : 1.0 - p;
    if (tail <= 0) {
      return q < 0 ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    double r = Math.sqrt(-Math.log(tail));
    double x = r <= 5.0 ? ratio(NEAR_NUM, NEAR_DEN, r - 1.6) : ratio(FAR_NUM, FAR_DEN, r - 5.0);
    return q < 0 ? -x : x;
  }

  /** num(r) / den(r), each polynomial evaluated by Horner's rule from its highest term. */
  private static double ratio(double[] num, double[] den, double r) {
    return horner(num, r) / horner(den, r);
  }

  private static double horner(double[] coefficients, double r) {
    double value = coefficients[coefficients.length - 1];
    for (int i = coefficients.length - 2; i >= 0; i--) {
      value = value * r + coefficients[i];
    }
    return value;
  }
}
