"""An actor-critic update on a small deterministic environment.

The style of the TensorFlow "Playing CartPole with the actor-critic method" tutorial: a shared
trunk with an actor (logits) head and a critic (value) head, an episode rolled out by sampling
from tf.random.categorical, discounted and standardised returns, and a Huber critic loss.
"""

import json

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(8)
tf.random.set_seed(8)
GAMMA, EPS = 0.99, np.finfo(np.float32).eps.item()


class LineWorld:
    """A walk on 0..8 from the middle: reward +1 a step right, -1 a step left.

    The episode ends at 8 or after 20 steps.
    """

    def reset(self):
        self.position, self.steps = 4, 0
        return self.observation()

    def observation(self):
        return np.eye(9, dtype="float32")[self.position]

    def step(self, action):
        self.position = int(np.clip(self.position + (1 if action == 1 else -1), 0, 8))
        self.steps += 1
        done = self.position == 8 or self.steps >= 20
        return self.observation(), 1.0 if action == 1 else -1.0, done


class ActorCritic(tf.keras.Model):
    def __init__(self, num_actions, num_hidden):
        super().__init__()
        self.common = tf.keras.layers.Dense(num_hidden, activation="relu")
        self.actor = tf.keras.layers.Dense(num_actions)
        self.critic = tf.keras.layers.Dense(1)

    def call(self, inputs):
        x = self.common(inputs)
        return self.actor(x), self.critic(x)


def expected_return(rewards, standardize):
    returns = []
    discounted = 0.0
    for reward in reversed(rewards):
        discounted = reward + GAMMA * discounted
        returns.insert(0, discounted)
    returns = tf.constant(returns, dtype=tf.float32)
    if standardize:
        returns = (returns - tf.math.reduce_mean(returns)) / (tf.math.reduce_std(returns) + EPS)
    return returns


huber = tf.keras.losses.Huber(reduction="sum")


def compute_loss(action_probs, values, returns):
    advantage = returns - values
    actor_loss = -tf.math.reduce_sum(tf.math.log(action_probs) * advantage)
    return actor_loss + huber(values, returns)


model = ActorCritic(2, 16)
model(tf.zeros((1, 9)))
init = np.random.default_rng(4)
model.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()])
optimizer = tf.keras.optimizers.Adam(learning_rate=0.02)
env = LineWorld()


def episode_loss(observations, actions, rewards):
    logits, values = model(tf.stack(observations))
    probs = tf.nn.softmax(logits)
    chosen = tf.gather(probs, actions, batch_dims=1)
    returns = expected_return(rewards, standardize=False)
    return compute_loss(chosen, tf.squeeze(values, axis=1), returns)


# A fixed trajectory (right, left, then right to the end) from identical weights: comparable.
env.reset()
fixed_obs, fixed_actions, fixed_rewards = [], [], []
for action in [1, 0, 1, 1, 1, 1, 1]:
    fixed_obs.append(env.observation())
    _, reward, _ = env.step(action)
    fixed_actions.append(action)
    fixed_rewards.append(reward)
with tf.GradientTape() as tape:
    fixed_loss = episode_loss(fixed_obs, fixed_actions, fixed_rewards)
fixed_grads = tape.gradient(fixed_loss, model.trainable_variables)
fixed_grad_norm = float(tf.linalg.global_norm(fixed_grads))

episode_rewards = []
for _ in range(60):
    observation, done = env.reset(), False
    observations, actions, rewards = [], [], []
    while not done:
        logits, _ = model(observation[None, :])
        action = int(tf.random.categorical(logits, 1)[0, 0])
        observations.append(observation)
        actions.append(action)
        observation, reward, done = env.step(action)
        rewards.append(reward)
    with tf.GradientTape() as tape:
        loss = episode_loss(observations, actions, rewards)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    episode_rewards.append(float(np.mean(actions)))

first, last = float(np.mean(episode_rewards[:10])), float(np.mean(episode_rewards[-10:]))
print(f"fraction of steps to the right: first 10 episodes {first:.2f}, last 10 {last:.2f}")
results = {
    "check": {"first_right_fraction": first, "last_right_fraction": last},
    "compare": {
        "fixed_loss": float(fixed_loss),
        "fixed_grad_norm": fixed_grad_norm,
        "standardized_fixed_returns": expected_return(fixed_rewards, True).numpy().tolist(),
    },
}
print("RESULT", json.dumps(results))
