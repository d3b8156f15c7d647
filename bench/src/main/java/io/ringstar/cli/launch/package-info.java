/**
 * Where the ranks of a command run: {@link io.ringstar.cli.launch.RankPlacement} decides from the
 * flags and a launcher's variables whether this process runs every rank as a thread or is one rank
 * of a group of processes; {@link io.ringstar.cli.launch.RankThreads} runs the local ranks, each on
 * its own thread and under a time limit; {@link io.ringstar.cli.launch.LaunchCommand} starts a group
 * of rank processes on this machine, the way torchrun does, and watches them.
 */
package io.ringstar.cli.launch;
