/**
 * Trajectory samples for training (JSON Lines), and scratchpad helpers.
 *
 * @module
 */
import { todo } from "./_todo.ts";

/** Options of `saveTrajectory`. */
export interface SaveTrajectoryOptions {
  model: string;
  completed: boolean;
  /** @default {"trajectory_samples.jsonl" or "failed_trajectories.jsonl"} */
  filename?: string;
}

export function saveTrajectory(_trajectory: unknown[], _options: SaveTrajectoryOptions): void {
  todo("saveTrajectory");
}

export function convertScratchpadToThink(_content: string): string {
  return todo("convertScratchpadToThink");
}

export function hasIncompleteScratchpad(_content: string): boolean {
  return todo("hasIncompleteScratchpad");
}
