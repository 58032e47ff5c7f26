package gdpr_lakehouse.sql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.CallMethodViaReflection;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=gdpr_lakehouse.sql.KeyEnvelopeExtension} (profiles.yml, the
 * warm engine, the loopback cluster's Thrift server): SQL can use the key-encryption key and
 * never see it.
 *
 * <ul>
 *   <li>{@code gdpr_wrap_key(key, binding, variable)}, {@code gdpr_encrypt(value, wrapped,
 *       binding, aad, variable)}, {@code gdpr_decrypt(cipher, wrapped, binding, aad, variable)},
 *       {@code gdpr_try_decrypt(...)}, {@code gdpr_keyed_hash(wrapped, binding, data, variable)},
 *       {@code gdpr_key_opens(wrapped, binding, variable)} and {@code gdpr_bind_key(wrapped,
 *       binding, variable)} (the migration to bound keys):
 *       {@link KeyEnvelope}, which reads the key-encryption key from the environment variable
 *       named, inside the JVM, and opens a wrapped key only to use it: no function returns the
 *       KEK or an unwrapped key;
 *   <li>reflection refused at analysis, in every statement, view and subquery: {@code
 *       reflect}, {@code java_method} and Hive's reflect functions called any static method
 *       of any class on the class path ({@code System.getenv} returned the key), so only
 *       {@code java.lang.Thread.sleep} (the macros' retry pause) is allowed.
 * </ul>
 */
public final class KeyEnvelopeExtension
    extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    DataType bytes = DataTypes.BinaryType;
    extensions.injectFunction(function("gdpr_wrap_key", "wrap", bytes, "key", "binding"));
    for (String[] decrypting :
        new String[][] {{"gdpr_decrypt", "decrypt"}, {"gdpr_try_decrypt", "tryDecrypt"}}) {
      extensions.injectFunction(
          function(decrypting[0], decrypting[1], bytes, "cipher", "wrapped", "binding", "aad"));
    }
    extensions.injectFunction(
        function("gdpr_encrypt", "encrypt", bytes, "value", "wrapped", "binding", "aad"));
    extensions.injectFunction(
        function("gdpr_keyed_hash", "keyedHash", DataTypes.StringType, "wrapped", "binding", "data"));
    extensions.injectFunction(
        function("gdpr_key_opens", "opens", DataTypes.BooleanType, "wrapped", "binding"));
    extensions.injectFunction(function("gdpr_bind_key", "bindKey", bytes, "wrapped", "binding"));
    extensions.injectCheckRule(
        new AbstractFunction1<SparkSession, Function1<LogicalPlan, BoxedUnit>>() {
          @Override
          public Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
            return new RefuseReflection();
          }
        });
    return BoxedUnit.UNIT;
  }

  /**
   * A function calling {@code KeyEnvelope.method}: binary arguments, then the name of the
   * variable holding the key-encryption key (a string). NULL in, NULL out.
   */
  private static Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>>
      function(String name, String method, DataType returns, String... binaries) {
    String[] parameters = Arrays.copyOf(binaries, binaries.length + 1);
    parameters[binaries.length] = "variable";
    Function1<Seq<Expression>, Expression> builder =
        new AbstractFunction1<Seq<Expression>, Expression>() {
          @Override
          public Expression apply(Seq<Expression> arguments) {
            if (arguments.size() != parameters.length) {
              throw new IllegalArgumentException(
                  name
                      + " takes "
                      + parameters.length
                      + " arguments: "
                      + String.join(", ", parameters)
                      + " (binary, the last the name of the environment variable holding the"
                      + " key-encryption key, e.g. 'LAKEHOUSE_KEK')");
            }
            List<AbstractDataType> expected = new ArrayList<>();
            for (int i = 0; i < parameters.length - 1; i++) {
              expected.add(DataTypes.BinaryType);
            }
            expected.add(DataTypes.StringType);
            Seq<AbstractDataType> types = CollectionConverters.asScala(expected).toList();
            return new StaticInvoke(
                KeyEnvelope.class,
                returns,
                method,
                arguments,
                types,
                true,
                true,
                true,
                Option.empty());
          }
        };
    return new Tuple3<>(
        new FunctionIdentifier(name), new ExpressionInfo(KeyEnvelope.class.getName(), name), builder);
  }

  /** Fails the analysis of a plan that calls a static method by reflection. */
  static final class RefuseReflection extends AbstractFunction1<LogicalPlan, BoxedUnit> {
    @Override
    public BoxedUnit apply(LogicalPlan plan) {
      plan.foreachWithSubqueries(
          new AbstractFunction1<LogicalPlan, BoxedUnit>() {
            @Override
            public BoxedUnit apply(LogicalPlan node) {
              for (Expression expression : CollectionConverters.asJava(node.expressions())) {
                expression.foreach(
                    new AbstractFunction1<Expression, BoxedUnit>() {
                      @Override
                      public BoxedUnit apply(Expression found) {
                        check(found);
                        return BoxedUnit.UNIT;
                      }
                    });
              }
              return BoxedUnit.UNIT;
            }
          });
      return BoxedUnit.UNIT;
    }

    private static void check(Expression expression) {
      if (expression instanceof CallMethodViaReflection) {
        List<Expression> children = CollectionConverters.asJava(expression.children());
        String target = literal(children, 0) + "." + literal(children, 1);
        if (!target.equals("java.lang.Thread.sleep")) {
          throw refused("reflect/java_method (" + target + ")");
        }
      } else if (expression.getClass().getName().startsWith("org.apache.spark.sql.hive.Hive")
          && expression.toString().contains("UDFReflect")) {
        throw refused("Hive's reflect function");
      }
    }

    private static String literal(List<Expression> children, int index) {
      if (children.size() <= index || !children.get(index).foldable()) {
        return "?";
      }
      Object value = children.get(index).eval(null);
      return value == null ? "?" : value.toString();
    }

    private static RuntimeException refused(String what) {
      return new SecurityException(
          what
              + " is refused in this lakehouse's Spark sessions: reflection reaches any static"
              + " method of the JVM, the key-encryption key's environment variable too"
              + " (gdpr_lakehouse.sql.KeyEnvelopeExtension)");
    }
  }
}
