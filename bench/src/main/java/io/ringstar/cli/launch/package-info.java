/**
 * The launcher: {@link io.ringstar.cli.launch.Launcher} starts a group of rank processes on this
 * machine, the way torchrun does, prefixes their output and stops them all when one fails. It knows
 * nothing of the command line; {@code io.ringstar.cli.LaunchCommand} reads the flags and calls it.
 */
package io.ringstar.cli.launch;
