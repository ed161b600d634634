/*
 * Part of datae's BSBM benchmark (bench/bsbm/README.md); not from SSJ or bsbmtools.
 *
 * Stands in for SSJ's ParetoDist so that the BSBM generator's sources compile without
 * ssj.jar. Only benchmark.generator.ParetoDistGenerator refers to it, and nothing in the
 * generator uses that class: no data depends on this one.
 */
package umontreal.iro.lecuyer.probdist;

public class ParetoDist {
  private final double alpha;

  /** The Pareto law of shape {@code alpha} and scale 1: P(X > x) = x^-alpha for x >= 1. */
  public ParetoDist(double alpha) {
    this.alpha = alpha;
  }

  /** The value x with P(X <= x) = u. */
  public double inverseF(double u) {
    return Math.pow(1.0 - u, -1.0 / alpha);
  }
}
