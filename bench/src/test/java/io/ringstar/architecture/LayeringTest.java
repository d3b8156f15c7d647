package io.ringstar.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.domain.JavaTypeVariable;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pins the layering of issue 26 on the compiled main classes of every module (bench's test class path
 * sees them all; test classes and core's test-jar are left out):
 *
 * <ol>
 *   <li>no type of {@code io.ringstar.internal..} appears in a public or protected signature of a public
 *       type of a public package ({@link #PUBLIC_PACKAGES}): its superclass and interfaces, its type
 *       parameters' bounds, and its public fields, constructors and methods (parameter, return and thrown
 *       types, type arguments included), and its protected ones unless the type is final;</li>
 *   <li>the transport SPI ({@code io.ringstar.spi..}) depends on nothing in {@code io.ringstar.internal..};</li>
 *   <li>{@code io.ringstar}, the front door, holds at most {@link #MAX_FRONT_DOOR_TYPES} public top-level
 *       types (nested builders are part of their type, as the issue counts them).</li>
 * </ol>
 *
 * Each test names every violation it finds, not only the first.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LayeringTest {

    /**
     * The packages whose public types are API: users' (and transport authors') code may name them, and the
     * published Javadoc shows them (the transports' public classes included).
     */
    static final List<String> PUBLIC_PACKAGES = List.of("io.ringstar", "io.ringstar.config", "io.ringstar.spi..",
            "io.ringstar.checkpoint", "io.ringstar.dl4j", "io.ringstar.transport..");
    static final String INTERNAL = "io.ringstar.internal";
    static final int MAX_FRONT_DOOR_TYPES = 25;

    private static JavaClasses mainClasses;

    @BeforeAll
    static void importMainClasses() {
        mainClasses = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                // The transports' relocated libraries (io.ringstar.transport.*.shaded) are not ringstar's code.
                .withImportOption(location -> !location.contains("/shaded/"))
                .importPackages("io.ringstar");
    }

    @Test
    void noInternalTypeInAPublicSignature() {
        List<JavaClass> apiTypes = mainClasses.stream()
                .filter(LayeringTest::isInPublicPackage)
                .filter(LayeringTest::isAccessibleFromOutside)
                .collect(Collectors.toList());
        assertFalse(apiTypes.isEmpty(), "no class of the public packages was imported: is core on the class path?");
        Set<String> violations = new TreeSet<>();
        for (JavaClass type : apiTypes) {
            violations.addAll(internalTypesInSignatureOf(type));
        }
        assertTrue(violations.isEmpty(), violations.size() + " public signatures expose io.ringstar.internal:\n"
                + String.join("\n", violations));
    }

    @Test
    void theSpiDependsOnNothingInternal() {
        noClasses().that().resideInAPackage("io.ringstar.spi..")
                .should().dependOnClassesThat().resideInAPackage(INTERNAL + "..")
                .because("a transport author compiles against io.ringstar.spi, which must not pull the engine in")
                .check(mainClasses);
    }

    @Test
    void theFrontDoorHoldsAtMost25PublicTypes() {
        List<String> frontDoor = mainClasses.stream()
                .filter(c -> c.getPackageName().equals("io.ringstar"))
                .filter(JavaClass::isTopLevelClass)
                .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getSimpleName)
                .sorted()
                .collect(Collectors.toList());
        assertFalse(frontDoor.isEmpty(), "no public type of io.ringstar was imported");
        assertTrue(frontDoor.size() <= MAX_FRONT_DOOR_TYPES, "io.ringstar holds " + frontDoor.size()
                + " public types, more than " + MAX_FRONT_DOOR_TYPES + ": " + frontDoor);
    }

    private static boolean isInPublicPackage(JavaClass type) {
        String pkg = type.getPackageName();
        for (String pattern : PUBLIC_PACKAGES) {
            if (pattern.endsWith("..")) {
                String root = pattern.substring(0, pattern.length() - 2);
                if (pkg.equals(root) || pkg.startsWith(root + ".")) {
                    return true;
                }
            } else if (pkg.equals(pattern)) {
                return true;
            }
        }
        return false;
    }

    /** Public, and nested only in public types: a type that code outside the package can name. */
    private static boolean isAccessibleFromOutside(JavaClass type) {
        if (type.isAnonymousClass() || type.isLocalClass() || !type.getModifiers().contains(JavaModifier.PUBLIC)) {
            return false;
        }
        return type.getEnclosingClass().map(LayeringTest::isAccessibleFromOutside).orElse(true);
    }

    private static List<String> internalTypesInSignatureOf(JavaClass type) {
        List<String> found = new ArrayList<>();
        String name = type.getName();
        type.getSuperclass().ifPresent(s -> report(found, name + " extends", List.of(s)));
        report(found, name + " implements", type.getInterfaces());
        for (JavaTypeVariable<JavaClass> variable : type.getTypeParameters()) {
            report(found, name + " type parameter " + variable.getName(), variable.getUpperBounds());
        }
        for (JavaField field : type.getFields()) {
            if (isVisibleToUsers(type, field)) {
                report(found, name + "." + field.getName() + " (field)", List.of(field.getType()));
            }
        }
        for (JavaConstructor constructor : type.getConstructors()) {
            if (isVisibleToUsers(type, constructor)) {
                reportCodeUnit(found, name + " constructor" + parameterList(constructor), constructor);
            }
        }
        for (JavaMethod method : type.getMethods()) {
            if (isVisibleToUsers(type, method)) {
                reportCodeUnit(found, name + "." + method.getName() + parameterList(method), method);
                report(found, name + "." + method.getName() + parameterList(method) + " returns",
                        List.of(method.getReturnType()));
            }
        }
        return found;
    }

    private static void reportCodeUnit(List<String> found, String where, JavaCodeUnit unit) {
        report(found, where + " takes", unit.getParameterTypes());
        report(found, where + " throws", unit.getThrowsClause().getTypes());
        for (JavaTypeVariable<? extends JavaCodeUnit> variable : unit.getTypeParameters()) {
            report(found, where + " type parameter " + variable.getName(), variable.getUpperBounds());
        }
    }

    /** Public, or protected in a class users can extend (a final class's protected members are no one's API). */
    private static boolean isVisibleToUsers(JavaClass owner, JavaMember member) {
        Set<JavaModifier> modifiers = member.getModifiers();
        if (modifiers.contains(JavaModifier.SYNTHETIC) || modifiers.contains(JavaModifier.BRIDGE)) {
            return false;
        }
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED)
                && !owner.getModifiers().contains(JavaModifier.FINAL);
    }

    private static void report(List<String> found, String where, Collection<? extends JavaType> types) {
        Set<String> internal = new TreeSet<>();
        for (JavaType type : types) {
            for (JavaClass raw : type.getAllInvolvedRawTypes()) {
                if (raw.getPackageName().equals(INTERNAL) || raw.getPackageName().startsWith(INTERNAL + ".")) {
                    internal.add(raw.getName());
                }
            }
        }
        if (!internal.isEmpty()) {
            found.add(where + ": " + String.join(", ", internal));
        }
    }

    private static String parameterList(JavaCodeUnit unit) {
        return unit.getRawParameterTypes().stream().map(JavaClass::getSimpleName)
                .collect(Collectors.joining(", ", "(", ")"));
    }
}
