// Flags large orders for a manual fraud review.
export async function onLargeOrder(event) {
  const order = event.new_image;
  const threshold = Number(process.env.LARGE_ORDER_THRESHOLD ?? 1000);
  const currency = process.env.CURRENCY ?? "EUR";
  console.log(
    `large order ${order.id}: ${order.amount} ${currency} (threshold ${threshold})` +
      `, customer ${order.customer_id ?? "unknown"}`,
  );
}
